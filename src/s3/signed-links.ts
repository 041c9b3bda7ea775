/**
 * Short-lived signed links to private stored files (exports' full contact data, and the
 * archive): `{base_url}/files/<key>?expires=<unix seconds>&signature=<hex>`, where the signature
 * is HMAC-SHA256 over `GET\n<key>\n<expires>` with a key derived from the storage secret (the
 * idea of S3's presigned GET URLs, with one query parameter per fact rather than SigV4's
 * canonical request: the only client is a browser or `curl` following the link as given).
 *
 * Every other stored file stays a capability by its key, as S3 `public-read` objects are
 * (contract §8); keys under a private prefix are served only with a valid, unexpired link, and
 * without CORS (a page on another origin cannot read them with a stolen link's help).
 */
import { fileUrl } from "./keys";
import { hmac, hmacHex } from "./sigv4";

export const PRIVATE_PREFIXES = ["exports/", "archives/"] as const;
export const isPrivateKey = (key: string) => PRIVATE_PREFIXES.some((p) => key.startsWith(p));

/** Default lifetime of a signed link (`SIGNED_LINK_SECONDS`): a fresh one comes with every read. */
export const DEFAULT_SIGNED_LINK_SECONDS = 900;
export function signedLinkSeconds(env: { SIGNED_LINK_SECONDS?: string }) {
  const n = Number(env.SIGNED_LINK_SECONDS);
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_SIGNED_LINK_SECONDS;
}

async function signature(secret: string, key: string, expires: number) {
  // A key of its own for links (domain separation from the upload forms' SigV4 keys).
  const linkKey = await hmac(secret, "field-dispatch signed links v1");
  return hmacHex(new Uint8Array(linkKey), `GET\n${key}\n${expires}`);
}

/** A link to `key` valid until `until` (ms), never later than `notAfter` (e.g. the file's own expiry). */
export async function signLink(
  env: { STORAGE_SECRET_ACCESS_KEY: string; SIGNED_LINK_SECONDS?: string },
  baseUrl: string,
  key: string,
  notAfter: number | null = null,
  now = Date.now(),
): Promise<{ url: string; expiresAt: number }> {
  let until = now + signedLinkSeconds(env) * 1000;
  if (notAfter !== null) until = Math.min(until, notAfter);
  const expires = Math.floor(until / 1000);
  const sig = await signature(env.STORAGE_SECRET_ACCESS_KEY, key, expires);
  return { url: `${fileUrl(baseUrl, key)}?expires=${expires}&signature=${sig}`, expiresAt: expires * 1000 };
}

export type LinkCheck = "ok" | "missing" | "expired" | "forged";

/** Checks a request's link for `key`: the signature first (constant time), then the expiry. */
export async function checkLink(
  env: { STORAGE_SECRET_ACCESS_KEY: string },
  key: string,
  url: URL,
  now = Date.now(),
): Promise<LinkCheck> {
  const expires = url.searchParams.get("expires");
  const sig = url.searchParams.get("signature");
  if (!expires || !sig) return "missing";
  if (!/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(sig)) return "forged";
  const expected = await signature(env.STORAGE_SECRET_ACCESS_KEY, key, Number(expires));
  let diff = 0;
  for (let i = 0; i < 64; i++) diff |= expected.charCodeAt(i) ^ sig.charCodeAt(i);
  if (diff !== 0) return "forged";
  return Number(expires) * 1000 <= now ? "expired" : "ok";
}
