#!/usr/bin/env node
// Copies the static assets that come from pinned npm packages into public/, which the static
// files' Worker serves as Workers Static Assets (static/wrangler.jsonc `assets`). Run by that
// Worker's `build.command` (dev, deploy, the bench) and by vitest.config.ts, so a fresh clone
// needs nothing but `npm install`. The copies are not
// committed (.gitignore); the licences that go with them are (public/fonts/OFL.txt).
//   - public/docs/vendor/: Swagger UI (swagger-ui-dist, an exact version), served under /docs/.
//   - public/fonts/: Noto Sans Regular and Bold (@expo-google-fonts/noto-sans, an exact version:
//     Google Fonts' build, Latin with its extensions, Greek and Cyrillic), which the Worker reads
//     through its ASSETS service binding to embed in PDFs (src/services/documents/fonts.ts). The
//     static Worker has no public address and the API routes nothing to /fonts/, so they are not
//     served to the public.
//   - public/console/: the dispatch console, built by Vite from web/ (web/vite.config.ts).
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const packageDir = (name) => dirname(require.resolve(`${name}/package.json`));
const versionOf = (dir) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version;

/** The font files under public/fonts/, by the name the Worker fetches them with. */
export const FONT_FILES = {
  "NotoSans-Regular.ttf": "400Regular/NotoSans_400Regular.ttf",
  "NotoSans-Bold.ttf": "700Bold/NotoSans_700Bold.ttf",
};

export function copyDocsAssets() {
  const dist = packageDir("swagger-ui-dist");
  const out = join(root, "public", "docs", "vendor");
  mkdirSync(out, { recursive: true });
  for (const file of ["swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png", "LICENSE"]) {
    copyFileSync(join(dist, file), join(out, file));
  }
  return versionOf(dist);
}

export function copyFontAssets() {
  const dir = packageDir("@expo-google-fonts/noto-sans");
  const out = join(root, "public", "fonts");
  mkdirSync(out, { recursive: true });
  for (const [name, from] of Object.entries(FONT_FILES)) copyFileSync(join(dir, from), join(out, name));
  // The committed licence must be the one the package ships: a new version under other terms
  // stops the build instead of shipping a font whose licence the repository does not carry.
  const shipped = readFileSync(join(dir, "LICENSE_FONT"), "utf8").trim();
  const kept = readFileSync(join(out, "OFL.txt"), "utf8").trim();
  if (shipped !== kept) throw new Error("public/fonts/OFL.txt differs from the font package's LICENSE_FONT");
  return versionOf(dir);
}

export function copyStaticAssets() {
  return { swaggerUi: copyDocsAssets(), notoSans: copyFontAssets() };
}

/**
 * The people's apps (web/, one Vite build) into public/console/ and public/app/, then the field
 * app's service worker and manifest (scripts/build-app-sw.mjs, which reads the build's manifest).
 * Quiet: the dev server's output is for the addresses a person opens.
 */
export async function buildWebApps() {
  const { build } = await import("vite");
  // Old hashed files would pile up beside the new ones (the build cannot empty public/ itself).
  for (const dir of ["console", "app", ".vite"])
    rmSync(join(root, "public", dir), { recursive: true, force: true });
  await build({ configFile: join(root, "web", "vite.config.ts"), logLevel: "warn" });
  const { buildAppServiceWorker } = await import("./build-app-sw.mjs");
  await buildAppServiceWorker();
}

/** Built only when missing (the tests read the pages, they do not need them fresh). */
export async function ensureWebApps() {
  if (
    !existsSync(join(root, "public", "console", "index.html")) ||
    !existsSync(join(root, "public", "app", "sw.js"))
  )
    await buildWebApps();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const v = copyStaticAssets();
  await buildWebApps();
  console.log(
    `Swagger UI ${v.swaggerUi} to public/docs/vendor/, Noto Sans ${v.notoSans} to public/fonts/, the console and the field app to public/console/ and public/app/`,
  );
}
