import { base64url, fromBase64url } from "../../lib/crypto";

/**
 * Webhook signing secrets at rest: AES-256-GCM (NIST SP 800-38D) under a key from the Worker
 * secret `WEBHOOK_SECRETS_KEYS` (`kid:base64-32-bytes,...`; the first encrypts, every one
 * decrypts, so keys rotate by prepending a new one and re-encrypting at leisure). A database
 * export alone therefore cannot forge deliveries. The webhook id is the additional
 * authenticated data, so a ciphertext copied onto another webhook's row does not open.
 *
 * Stored form: `enc:v1:<kid>:<base64url iv>:<base64url ciphertext+tag>`. A row without the
 * `enc:` prefix is a secret stored before encryption and is used as is.
 */
const PREFIX = "enc:v1:";
const enc = new TextEncoder();
const dec = new TextDecoder();

type Keyring = { first: string; keys: Map<string, Promise<CryptoKey>> };
let cached: { spec: string; ring: Keyring } | undefined;

function keyring(spec: string | undefined): Keyring {
  const text = (spec ?? "").trim();
  if (cached?.spec === text) return cached.ring;
  const keys = new Map<string, Promise<CryptoKey>>();
  let first = "";
  for (const part of text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const i = part.indexOf(":");
    if (i <= 0) throw new Error("WEBHOOK_SECRETS_KEYS: expected kid:base64 pairs");
    const kid = part.slice(0, i);
    const raw = fromBase64url(part.slice(i + 1).replace(/=+$/, ""));
    if (raw.byteLength !== 32) throw new Error(`WEBHOOK_SECRETS_KEYS: key ${kid} is not 32 bytes`);
    first ||= kid;
    keys.set(kid, crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]));
  }
  const ring = { first, keys };
  cached = { spec: text, ring };
  return ring;
}

export type SecretBoxEnv = { WEBHOOK_SECRETS_KEYS?: string };

export async function sealSecret(env: SecretBoxEnv, webhookId: string, secret: string): Promise<string> {
  const ring = keyring(env.WEBHOOK_SECRETS_KEYS);
  if (!ring.first) throw new Error("WEBHOOK_SECRETS_KEYS is not set: webhook secrets cannot be stored");
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: enc.encode(webhookId) },
    await ring.keys.get(ring.first)!,
    enc.encode(secret),
  );
  return `${PREFIX}${ring.first}:${base64url(iv)}:${base64url(new Uint8Array(ct))}`;
}

export async function openSecret(env: SecretBoxEnv, webhookId: string, stored: string): Promise<string> {
  if (!stored.startsWith(PREFIX)) return stored;
  const [kid, iv, ct] = stored.slice(PREFIX.length).split(":");
  const key = keyring(env.WEBHOOK_SECRETS_KEYS).keys.get(kid);
  if (!key) throw new Error(`WEBHOOK_SECRETS_KEYS has no key "${kid}" for webhook ${webhookId}`);
  const pt = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64url(iv), additionalData: enc.encode(webhookId) },
    await key,
    fromBase64url(ct),
  );
  return dec.decode(pt);
}
