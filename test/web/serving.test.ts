import { describe, expect, it } from "vitest";
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
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
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
