import { errors, type JWTPayload, jwtVerify, SignJWT } from "jose";
import { fromBase64url } from "../../lib/crypto";

export const JWT_ISSUER = "field-dispatch";
export const JWT_AUDIENCE = "field-dispatch-api";
/** `typ` header values (RFC 8725 §3.11: explicit typing keeps one kind from passing as another). */
export const JWT_TYP = { session: "session+jwt", authorization: "authz+jwt" } as const;
export type JwtKind = keyof typeof JWT_TYP;

export const SESSION_TTL_SECONDS = 30 * 24 * 3600;
export const AUTHORIZATION_TTL_SECONDS = 15 * 60;

type Keyring = {
  current: { kid: string; key: Uint8Array };
  byKid: Map<string, Uint8Array>;
  /** HMAC keys imported for verification, by kid (imported once per isolate, not per request). */
  verifyKeys: Map<string, CryptoKey>;
};
const keyringCache = new Map<string, Keyring>();

/** `JWT_SECRETS` = `kid:secret,kid:secret`; the first signs, every listed key verifies (rotation). */
export function keyring(secrets: string | undefined): Keyring {
  if (!secrets) throw new Error("JWT_SECRETS is not configured");
  let ring = keyringCache.get(secrets);
  if (ring) return ring;
  const entries = secrets
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((pair) => {
      const i = pair.indexOf(":");
      if (i <= 0) throw new Error("JWT_SECRETS entries must be kid:secret");
      return { kid: pair.slice(0, i), key: fromBase64url(pair.slice(i + 1)) };
    });
  if (entries.some((e) => e.key.byteLength < 32)) throw new Error("JWT secrets must be at least 256 bits");
  ring = { current: entries[0], byKid: new Map(entries.map((e) => [e.kid, e.key])), verifyKeys: new Map() };
  keyringCache.set(secrets, ring);
  return ring;
}

export async function signJwt(
  secrets: string,
  kind: JwtKind,
  claims: { sub: string; jti: string; acc?: string; act?: string },
  expiresAtSeconds: number,
): Promise<string> {
  const { current } = keyring(secrets);
  // RFC 8693 §4.1: `act` names the party acting on behalf of `sub` (an admin's hijack).
  const payload: JWTPayload & { acc?: string; act?: { sub: string } } = {
    acc: claims.acc,
    ...(claims.act ? { act: { sub: claims.act } } : {}),
  };
  return new SignJWT(payload)
    .setProtectedHeader({ alg: "HS256", kid: current.kid, typ: JWT_TYP[kind] })
    .setSubject(claims.sub)
    .setJti(claims.jti)
    .setIssuer(JWT_ISSUER)
    .setAudience(JWT_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(expiresAtSeconds)
    .sign(current.key);
}

export type VerifiedJwt = {
  kind: JwtKind;
  sub: string;
  jti: string;
  acc?: string;
  act?: string;
  exp: number;
};

/**
 * Tokens this isolate has verified, by the token's text: a phone presents the same session JWT
 * on every request, and its signature, issuer, audience and `typ` cannot change, so they are
 * checked once (jose, with the key imported once). What does change with time is checked on
 * every use: `exp` and `nbf` against the clock. Whether the token is still alive (revoked, its
 * chain, its user and role) is never remembered: the token's row is read on every request.
 * Only tokens that verified are kept, so a caller cannot fill this with junk; it is keyed by
 * the secrets too, so a key taken out of JWT_SECRETS stops its tokens at once.
 */
const verified = new Map<string, { secrets: string; jwt: VerifiedJwt; nbf?: number }>();
const MAX_VERIFIED = 10_000;

/** jose's clock test (RFC 7519 §4.1.4, §4.1.5; no leeway): valid while exp > now >= nbf. */
const timely = (exp: number, nbf: number | undefined, nowSeconds: number) =>
  exp > nowSeconds && (nbf === undefined || nbf <= nowSeconds);

/**
 * Verifies signature, algorithm (pinned to HS256, so `alg: none` and asymmetric
 * confusion fail), issuer, audience, expiry, `iat` and `typ`. Returns null on any failure.
 */
export async function verifyJwt(secrets: string, token: string): Promise<VerifiedJwt | null> {
  const nowSeconds = Math.floor(Date.now() / 1000);
  const known = verified.get(token);
  if (known && known.secrets === secrets) {
    return timely(known.jwt.exp, known.nbf, nowSeconds) ? known.jwt : null;
  }
  const ring = keyring(secrets);
  try {
    const { payload, protectedHeader } = await jwtVerify(
      token,
      async (header) => {
        const raw = header.kid ? ring.byKid.get(header.kid) : undefined;
        if (!raw || !header.kid) throw new errors.JWKSNoMatchingKey();
        let key = ring.verifyKeys.get(header.kid);
        if (!key) {
          key = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, [
            "verify",
          ]);
          ring.verifyKeys.set(header.kid, key);
        }
        return key;
      },
      {
        algorithms: ["HS256"],
        issuer: JWT_ISSUER,
        audience: JWT_AUDIENCE,
        requiredClaims: ["exp", "iat", "sub", "jti"],
      },
    );
    const kind = (Object.keys(JWT_TYP) as JwtKind[]).find((k) => JWT_TYP[k] === protectedHeader.typ);
    if (!kind) return null;
    if (typeof payload.iat !== "number" || payload.iat > Date.now() / 1000 + 60) return null;
    const jwt: VerifiedJwt = {
      kind,
      sub: payload.sub!,
      jti: payload.jti!,
      acc: typeof payload.acc === "string" ? payload.acc : undefined,
      act: actorOf(payload.act),
      exp: payload.exp!,
    };
    if (verified.size >= MAX_VERIFIED) verified.clear();
    verified.set(token, { secrets, jwt, nbf: typeof payload.nbf === "number" ? payload.nbf : undefined });
    return jwt;
  } catch {
    return null;
  }
}

function actorOf(act: unknown): string | undefined {
  const sub = (act as { sub?: unknown } | undefined)?.sub;
  return typeof sub === "string" ? sub : undefined;
}

export const looksLikeJwt = (token: string) => token.split(".").length === 3;
