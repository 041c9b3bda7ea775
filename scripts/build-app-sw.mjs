#!/usr/bin/env node
// The field app's service worker and web app manifest (contract §27), after the Vite build of
// web/ (web/vite.config.ts writes public/.vite/manifest.json):
//   - public/app/sw.js: web/app/sw.ts (Workbox's precaching and routing), bundled by Vite as one
//     classic script, with the precache list written in where Workbox expects it
//     (`self.__WB_MANIFEST`): the app's page, its entry, every chunk and stylesheet it imports,
//     and its icon, each with a content hash as its revision. Only what the field app loads:
//     the console's own chunks and the map library are not fetched onto phones.
//   - public/app/manifest.webmanifest and public/app/icon.svg: what makes the app installable.
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "vite";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "public");

/** The field app's files, from Vite's manifest: its entry and everything it imports, statically. */
export function appFiles(manifest) {
  const entryKey = Object.keys(manifest).find((k) => manifest[k].isEntry && k.endsWith("app/index.html"));
  if (!entryKey) throw new Error("public/.vite/manifest.json has no entry app/index.html");
  const files = new Set(["app/index.html", "app/icon.svg", "app/manifest.webmanifest"]);
  const walk = (key) => {
    const chunk = manifest[key];
    if (!chunk || files.has(chunk.file)) return;
    files.add(chunk.file);
    for (const css of chunk.css ?? []) files.add(css);
    for (const imp of chunk.imports ?? []) walk(imp);
  };
  walk(entryKey);
  return [...files];
}

export async function buildAppServiceWorker() {
  mkdirSync(join(out, "app"), { recursive: true });
  copyFileSync(join(root, "web", "app", "icon.svg"), join(out, "app", "icon.svg"));
  writeFileSync(
    join(out, "app", "manifest.webmanifest"),
    `${JSON.stringify(
      {
        name: "Field app",
        short_name: "Field",
        description: "Today's route, the actions and proof of delivery, offline first.",
        start_url: "/app/",
        scope: "/app/",
        display: "standalone",
        background_color: "#f4f5f7",
        theme_color: "#1d4f91",
        icons: [{ src: "/app/icon.svg", sizes: "any", type: "image/svg+xml", purpose: "any maskable" }],
      },
      null,
      2,
    )}\n`,
  );
  const manifest = JSON.parse(readFileSync(join(out, ".vite", "manifest.json"), "utf8"));
  const precache = appFiles(manifest).map((file) => ({
    url: `/${file}`,
    revision: createHash("sha256")
      .update(readFileSync(join(out, file)))
      .digest("hex")
      .slice(0, 16),
  }));
  await build({
    configFile: false,
    logLevel: "warn",
    root: join(root, "web"),
    // Production Workbox: without its development-time messages and checks.
    define: {
      "self.__WB_MANIFEST": JSON.stringify(precache),
      "process.env.NODE_ENV": JSON.stringify("production"),
    },
    build: {
      outDir: join(out, "app"),
      emptyOutDir: false,
      copyPublicDir: false,
      target: "es2022",
      minify: true,
      lib: {
        entry: join(root, "web", "app", "sw.ts"),
        formats: ["iife"],
        name: "sw",
        fileName: () => "sw.js",
      },
    },
  });
  return precache.length;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = await buildAppServiceWorker();
  console.log(`public/app/sw.js: ${n} files precached`);
}
