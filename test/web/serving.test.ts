import { describe, expect, it } from "vitest";
import { mapStyleProblem as scriptsRule } from "../../scripts/map-style.mjs";
import { consoleCsp, consolePage, FIELD_APP_CSP } from "../../src/apps/docs";
import { mapStyleProblem } from "../../src/domain/map-style";
import { BASE, call, expectStatus } from "../helpers";

// The dispatch console's files (contract §26, docs/layout.md): from the static Worker through
// ASSETS, under a CSP without inline script; the page never cached, its hashed assets for a year.
describe("/console/", () => {
  it("serves the page under a strict CSP, not cached, with its hashed assets cached long", async () => {
    const page = await call("/console/");
    expectStatus(page, 200);
    expect(page.headers.get("Content-Type")).toMatch(/^text\/html/);
    expect(page.headers.get("Cache-Control")).toBe("no-cache");
    const csp = page.headers.get("Content-Security-Policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain(`connect-src 'self' ${BASE.replace(/^http/, "ws")}`);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    for (const script of page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
      expect(script[1]).toMatch(/\bsrc="\/console\/assets\//);
      expect(script[2].trim()).toBe("");
    }
    const assets = [...page.text.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const path of assets) {
      const asset = await call(path);
      expectStatus(asset, 200);
      expect(asset.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
      expect(asset.headers.get("Content-Security-Policy")).toBe(csp);
    }
  });

  it("answers 404 for a missing file", async () => {
    expectStatus(await call("/console/assets/missing-00000000.js"), 404);
  });
});

// The field app's files (contract §27): the same static Worker, its own CSP (this origin only, its
// service worker and manifest), the page, the worker and the manifest never cached.
describe("/app/", () => {
  it("serves the page, its service worker and manifest under a strict CSP, not cached", async () => {
    const page = await call("/app/");
    expectStatus(page, 200);
    expect(page.headers.get("Content-Type")).toMatch(/^text\/html/);
    expect(page.headers.get("Cache-Control")).toBe("no-cache");
    const csp = page.headers.get("Content-Security-Policy") ?? "";
    expect(csp).toBe(FIELD_APP_CSP);
    expect(csp).toContain("worker-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|ws:/);
    for (const script of page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
      expect(script[1]).toMatch(/\bsrc="\/console\/assets\//);
      expect(script[2].trim()).toBe("");
    }
    expect(page.text).toContain('rel="manifest" href="/app/manifest.webmanifest"');
    const sw = await call("/app/sw.js");
    expectStatus(sw, 200);
    expect(sw.headers.get("Content-Type")).toMatch(/javascript/);
    expect(sw.headers.get("Cache-Control")).toBe("no-cache");
    // Workbox's precache list names the page and the app's own hashed files.
    expect(sw.text).toContain("/app/index.html");
    const manifest = await call("/app/manifest.webmanifest");
    expectStatus(manifest, 200);
    expect(JSON.parse(manifest.text)).toMatchObject({
      start_url: "/app/",
      scope: "/app/",
      display: "standalone",
    });
    expectStatus(await call("/app/missing.js"), 404);
  });
});

describe("the console's map style setting (MAP_STYLE_URL)", () => {
  it("names the style in the page and allows its origin only when it is set", () => {
    const html = "<html><head><title>x</title></head><body></body></html>";
    expect(consolePage(html, "")).toBe(html);
    expect(consolePage(html, "javascript:alert(1)")).toBe(html);
    expect(consolePage(html, 'https://tiles.example.com/style.json?a=1&b="2"')).toContain(
      '<meta name="map-style" content="https://tiles.example.com/style.json?a=1&amp;b=&quot;2&quot;" />',
    );
    const plain = consoleCsp("https://dispatch.example.com");
    expect(plain).toContain("connect-src 'self' wss://dispatch.example.com;");
    expect(plain).not.toContain("tiles.example.com");
    const styled = consoleCsp("https://dispatch.example.com", "https://tiles.example.com/style.json");
    expect(styled).toContain("connect-src 'self' wss://dispatch.example.com https://tiles.example.com;");
    expect(styled).toContain("img-src 'self' data: blob: https://tiles.example.com;");
  });

  it("takes an https: URL with one concrete host only; blob: workers only with a style (issue 52 item 5)", () => {
    const origin = "https://dispatch.example.com";
    expect(consoleCsp(origin)).toContain("worker-src 'self';");
    expect(consoleCsp(origin, "https://tiles.example.com/style.json")).toContain("worker-src 'self' blob:;");
    const html = "<html><head></head></html>";
    for (const bad of [
      "https://*.example/style.json",
      "https://%2A.example/style.json",
      "http://tiles.example.com/style.json",
      "https://user:secret@tiles.example.com/style.json",
      "ftp://tiles.example.com/style.json",
      "not a url",
    ]) {
      expect(mapStyleProblem(bad), bad).toMatch(/^MAP_STYLE_URL /);
      expect(scriptsRule(bad), `scripts/map-style.mjs: ${bad}`).toBe(mapStyleProblem(bad));
      const csp = consoleCsp(origin, bad);
      expect(csp, bad).not.toMatch(/\*|http:|tiles\.example\.com/);
      expect(csp).toContain("worker-src 'self';");
      expect(consolePage(html, bad)).toBe(html);
    }
    for (const good of [
      "",
      "https://tiles.example.com/style.json",
      "https://r2.example.net:8443/s.json?k=1",
    ]) {
      expect(mapStyleProblem(good), good).toBeNull();
      expect(scriptsRule(good)).toBeNull();
    }
  });
});
