/**
 * Standard Webhooks signing (https://www.standardwebhooks.com/, spec "Signature scheme"):
 * the secret is `whsec_` + base64 of 24–64 random bytes; the signature is
 * `v1,` + base64(HMAC-SHA256(key = the decoded bytes, "<webhook-id>.<webhook-timestamp>.<body>")).
 * Any Standard Webhooks verifier (e.g. the `standardwebhooks` npm package) accepts it.
 */
const SECRET_PREFIX = "whsec_";
const SECRET_BYTES = 32;
const enc = new TextEncoder();

const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const fromBase64 = (s: string) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0));

export function newWebhookSecret(): string {
  const bytes = new Uint8Array(SECRET_BYTES);
  crypto.getRandomValues(bytes);
  return SECRET_PREFIX + toBase64(bytes);
}

export async function signPayload(secret: string, id: string, timestampSeconds: number, body: string) {
  const raw = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = await crypto.subtle.importKey(
    "raw",
    fromBase64(raw),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, enc.encode(`${id}.${timestampSeconds}.${body}`));
  return `v1,${toBase64(new Uint8Array(mac))}`;
}
