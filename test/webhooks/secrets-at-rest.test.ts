import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { openSecret, sealSecret } from "../../src/services/webhooks/secret-box";
import { isPrivateHost, webhookUrlError } from "../../src/services/webhooks/ssrf";
import { call, expectStatus, newAccount } from "../helpers";
import { stored } from "../stored";

describe("webhook secrets are encrypted at rest", () => {
  it("stores the secret sealed with the first key, never in clear", async () => {
    const acc = await newAccount();
    const r = await call("/webhooks/", { token: acc.admin.token, body: { url: "https://example.com/hook" } });
    expectStatus(r, 201);
    const row = await stored.prepare("SELECT secret FROM webhooks WHERE id = ?").bind(r.body.id).first<any>();
    expect(row.secret.startsWith("enc:v1:whk-2:")).toBe(true);
    expect(row.secret).not.toContain(r.body.secret.slice(6));
    expect(await openSecret(env, r.body.id, row.secret)).toBe(r.body.secret);
  });

  it("opens rows sealed with an older key and plain rows from before encryption; refuses a row moved to another webhook", async () => {
    const oldKeyOnly = { WEBHOOK_SECRETS_KEYS: env.WEBHOOK_SECRETS_KEYS.split(",")[1] };
    const sealed = await sealSecret(oldKeyOnly, "hook-a", "whsec_abc");
    expect(sealed.startsWith("enc:v1:whk-1:")).toBe(true);
    expect(await openSecret(env, "hook-a", sealed)).toBe("whsec_abc");
    expect(await openSecret(env, "hook-a", "whsec_plain")).toBe("whsec_plain");
    await expect(openSecret(env, "hook-b", sealed)).rejects.toThrow();
  });
});

describe("webhook targets", () => {
  it("refuses non-web ports and names that resolve to loopback by design", async () => {
    expect(webhookUrlError("https://1.1.1.1:22/", false)).toMatch(/ports/);
    expect(webhookUrlError("https://example.com:8443/x", false)).toBeNull();
    expect(webhookUrlError("https://example.com/x", false)).toBeNull();
    for (const host of [
      "127.0.0.1.nip.io",
      "10-0-0-1.sslip.io",
      "localtest.me",
      "app.localtest.me",
      "api.localhost",
      "192.168.1.1.example.com",
      "lvh.me",
    ]) {
      expect(isPrivateHost(host), host).toBe(true);
    }
    expect(isPrivateHost("hooks.example.com")).toBe(false);
    expect(isPrivateHost("[::ffff:127.0.0.1]")).toBe(true);
    expect(isPrivateHost("[2002:7f00:1::]")).toBe(true);
    const acc = await newAccount();
    const r = await call("/webhooks/", {
      token: acc.admin.token,
      body: { url: "https://127.0.0.1.nip.io/h" },
    });
    expectStatus(r, 400);
    const port = await call("/webhooks/", {
      token: acc.admin.token,
      body: { url: "https://example.com:22/h" },
    });
    expectStatus(port, 400);
    expect(port.body.url[0]).toMatch(/80, 443, 8080, 8443/);
  });
});
