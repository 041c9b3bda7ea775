/**
 * The fonts the PDFs embed (the proof of delivery, contract §19; the route report, §16): Noto Sans
 * Regular and Bold, kept in Workers Static Assets (public/fonts/, copied by
 * scripts/static-assets.mjs) rather than in the bundle: the two files are 1.2 MiB, and assets do
 * not count toward the Worker's size. They are the assets of the static files' Worker
 * (static/wrangler.jsonc), which this Worker reads through its ASSETS service binding, once per
 * isolate; each PDF then embeds a subset of only the glyphs it uses (src/render/pdf-doc.ts).
 */
import type { FontFiles } from "../../render/pdf-doc";

const FILES = { regular: "/fonts/NotoSans-Regular.ttf", bold: "/fonts/NotoSans-Bold.ttf" } as const;

let cached: Promise<FontFiles> | null = null;

async function load(assets: Fetcher): Promise<FontFiles> {
  const read = async (path: string) => {
    // The host is not looked at: the static files' Worker serves its assets by path.
    const res = await assets.fetch(new Request(`https://assets.invalid${path}`));
    if (!res.ok) throw new Error(`The PDF font ${path} is missing from the static assets (${res.status}).`);
    return new Uint8Array(await res.arrayBuffer());
  };
  const [regular, bold] = await Promise.all([read(FILES.regular), read(FILES.bold)]);
  return { regular, bold };
}

/** Both fonts' bytes; a failed read is not kept, so the next PDF tries again. */
export function documentFonts(env: { ASSETS: Fetcher }): Promise<FontFiles> {
  if (!cached) {
    cached = load(env.ASSETS);
    cached.catch(() => {
      cached = null;
    });
  }
  return cached;
}
