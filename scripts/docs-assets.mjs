#!/usr/bin/env node
// Copies the pinned Swagger UI build (package.json: swagger-ui-dist, an exact version) into
// public/docs/vendor/, which Workers Static Assets serve under /docs/ (wrangler.jsonc
// `assets`). Run by wrangler's `build.command` (dev, deploy) and by vitest.config.ts, so a
// fresh clone needs nothing but `npm install`. The copies are not committed (.gitignore).
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const dist = dirname(require.resolve("swagger-ui-dist/package.json"));
const out = join(root, "public", "docs", "vendor");

export function copyDocsAssets() {
  mkdirSync(out, { recursive: true });
  for (const file of ["swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png", "LICENSE"]) {
    copyFileSync(join(dist, file), join(out, file));
  }
  return JSON.parse(readFileSync(join(dist, "package.json"), "utf8")).version;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`Swagger UI ${copyDocsAssets()} copied to public/docs/vendor/`);
}
