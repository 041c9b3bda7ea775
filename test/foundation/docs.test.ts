import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { BASE, call, expectStatus } from "../helpers";

/** Every URL a page's markup or script refers to (attributes and string literals). */
const references = (text: string) =>
  [...text.matchAll(/(?:src|href|url)\s*[=:(]\s*["']?([^"')\s>]+)/gi)].map((m) => m[1]);

describe("/docs/", () => {
  it("is served from this service only, under a Content-Security-Policy", async () => {
    const page = await call("/docs/");
    expectStatus(page, 200);
    expect(page.headers.get("Content-Type")).toMatch(/^text\/html/);
    const csp = page.headers.get("Content-Security-Policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    // No inline script: every <script> has a src (the policy would block an inline one anyway).
    for (const script of page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
      expect(script[1]).toMatch(/\bsrc=/);
      expect(script[2].trim()).toBe("");
    }
    const refs = references(page.text);
    expect(refs.length).toBeGreaterThanOrEqual(3);
    for (const ref of refs) {
      // Relative to the page, never another origin (`//host` or a scheme).
      expect(ref, ref).not.toMatch(/^(?:[a-z][a-z0-9+.-]*:|\/\/)/i);
      expect(new URL(ref, `${BASE}/docs/`).origin).toBe(BASE);
    }
  });

  it("serves the page's assets with their content types", async () => {
    const page = await call("/docs/");
    const assets = references(page.text).map((ref) => new URL(ref, `${BASE}/docs/`).pathname);
    expect(assets).toEqual(
      expect.arrayContaining([
        "/docs/vendor/swagger-ui-bundle.js",
        "/docs/vendor/swagger-ui.css",
        "/docs/init.js",
      ]),
    );
    const types: Record<string, RegExp> = { js: /javascript/, css: /^text\/css/, png: /^image\/png/ };
    for (const path of assets) {
      const r = await call(path);
      expectStatus(r, 200);
      expect(r.headers.get("Content-Type"), path).toMatch(types[path.split(".").pop()!]);
      expect(r.headers.get("Content-Security-Policy"), path).toContain("frame-ancestors 'none'");
      expect(r.text.length, path).toBeGreaterThan(0);
    }
  });

  it("starts Swagger UI on this service's document and asks no validator elsewhere", async () => {
    const init = await call("/docs/init.js");
    expectStatus(init, 200);
    expect(init.text).toContain('url: "/openapi.json"');
    expect(init.text).toContain("validatorUrl: null");
    expect(init.text).not.toMatch(/https?:\/\//);
    const css = await call("/docs/vendor/swagger-ui.css");
    // The stylesheet loads nothing from elsewhere (its icons are data: URLs).
    for (const m of css.text.matchAll(/url\(\s*["']?([^"')]+)/g)) expect(m[1]).toMatch(/^data:/);
    expect(css.text).not.toMatch(/@import/);
  });

  it("answers 404 in the API's shape for a file it does not have, and redirects /docs", async () => {
    const missing = await call("/docs/vendor/nothing-here.js");
    expectStatus(missing, 404);
    expect(missing.body.code).toBe("not_found");
    // Through the app itself: the test runtime's entry follows redirects.
    const bare = await createApp().request(
      `${BASE}/docs`,
      { headers: { "CF-Connecting-IP": "192.0.2.9" } },
      env,
    );
    expect(bare.status).toBe(301);
    expect(bare.headers.get("Location")).toBe("/docs/");
  });

  it("comes from the static files' Worker, which keeps the PDFs' fonts out of the public's reach", async () => {
    // The ASSETS service binding reaches the assets-only Worker of static/wrangler.jsonc.
    const font = await env.ASSETS.fetch("https://assets.invalid/fonts/NotoSans-Regular.ttf");
    expect(font.status).toBe(200);
    expect((await font.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
    const page = await env.ASSETS.fetch("https://assets.invalid/docs/");
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("init.js");
    // Through the API, the same path is not a file: only /docs/ is handed to the binding.
    for (const path of ["/fonts/NotoSans-Regular.ttf", "/fonts/OFL.txt"]) {
      const r = await call(path);
      expectStatus(r, 404);
      expect(r.body.code).toBe("not_found");
    }
  });
});
