import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const web = fileURLToPath(new URL(".", import.meta.url));

/**
 * One build for the people's apps (docs/layout.md): each app an HTML entry of a multi-page
 * build, so the field app (/app/) joins as a second entry and shares chunks with the console.
 * Output goes into the static files' Worker's assets (public/), next to /docs/; hashed files
 * under /console/assets/, which the API serves with a year's cache (src/apps/docs.ts).
 */
export default defineConfig({
  root: web,
  base: "/",
  publicDir: false,
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: resolve(web, "../public"),
    // public/ also holds /docs/ and the fonts, written by scripts/static-assets.mjs.
    emptyOutDir: false,
    assetsDir: "console/assets",
    target: "es2022",
    // The CSP allows no inline script: Vite's module preload polyfill would be one.
    modulePreload: { polyfill: false },
    sourcemap: false,
    // MapLibre GL JS (with its worker) is one lazy chunk of ~1 MB, loaded only with a map style.
    chunkSizeWarningLimit: 1200,
    // Which files the field app loads, for its service worker's precache (scripts/build-app-sw.mjs).
    manifest: true,
    rollupOptions: {
      input: { console: resolve(web, "console/index.html"), app: resolve(web, "app/index.html") },
    },
  },
});
