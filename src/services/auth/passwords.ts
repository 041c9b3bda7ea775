import { base64url, fromBase64url, timingSafeEqual } from "../../lib/crypto";

// PBKDF2-SHA256 from WebCrypto (NIST SP 800-132). workerd caps PBKDF2 at 100,000
// iterations, which is also what one request's CPU budget affords (~tens of ms).
export const PBKDF2_ITERATIONS = 100_000;
const enc = new TextEncoder();

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", enc.encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt, iterations },
    key,
    256,
  );
  return new Uint8Array(bits);
}

/** Django-style encoded hash: `pbkdf2_sha256$<iterations>$<salt>$<hash>` (base64url). */
export async function hashPassword(password: string, iterations = PBKDF2_ITERATIONS): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const hash = await derive(password, salt, iterations);
  return `pbkdf2_sha256$${iterations}$${base64url(salt)}$${base64url(hash)}`;
}

// Verifying against this when the user does not exist keeps the timing of "unknown user"
// and "wrong password" alike, so the response time does not reveal which e-mails exist.
const DUMMY = `pbkdf2_sha256$${PBKDF2_ITERATIONS}$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`;

export async function verifyPassword(password: string, encoded: string | null | undefined): Promise<boolean> {
  const parts = (encoded || DUMMY).split("$");
  if (parts.length !== 4 || parts[0] !== "pbkdf2_sha256") return false;
  const iterations = Number(parts[1]);
  const expected = fromBase64url(parts[3]);
  const actual = await derive(password, fromBase64url(parts[2]), iterations);
  return timingSafeEqual(actual, expected) && Boolean(encoded);
}
