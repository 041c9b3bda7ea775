import { errors, type JWTPayload, jwtVerify, SignJWT } from "jose";
import { fromBase64url } from "../../lib/crypto";

export const JWT_ISSUER = "field-dispatch";
export const JWT_AUDIENCE = "field-dispatch-api";
/** `typ` header values (RFC 8725 §3.11: explicit typing keeps one kind from passing as another). */
export const JWT_TYP = { session: "session+jwt", authorization: "authz+jwt" } as const;
export type JwtKind = keyof typeof JWT_TYP;

export const SESSION_TTL_SECONDS = 30 * 24 * 3600;
export const AUTHORIZATION_TTL_SECONDS = 15 * 60;

type Keyring = { current: { kid: string; key: Uint8Array }; byKid: Map<string, Uint8Array> };
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
  ring = { current: entries[0], byKid: new Map(entries.map((e) => [e.kid, e.key])) };
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
 * Verifies signature, algorithm (pinned to HS256, so `alg: none` and asymmetric
 * confusion fail), issuer, audience, expiry, `iat` and `typ`. Returns null on any failure.
 */
export async function verifyJwt(secrets: string, token: string): Promise<VerifiedJwt | null> {
  const ring = keyring(secrets);
  try {
    const { payload, protectedHeader } = await jwtVerify(
      token,
      async (header) => {
        const key = header.kid ? ring.byKid.get(header.kid) : undefined;
        if (!key) throw new errors.JWKSNoMatchingKey();
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
    return {
      kind,
      sub: payload.sub!,
      jti: payload.jti!,
      acc: typeof payload.acc === "string" ? payload.acc : undefined,
      act: actorOf(payload.act),
      exp: payload.exp!,
    };
  } catch {
    return null;
  }
}

function actorOf(act: unknown): string | undefined {
  const sub = (act as { sub?: unknown } | undefined)?.sub;
  return typeof sub === "string" ? sub : undefined;
}

export const looksLikeJwt = (token: string) => token.split(".").length === 3;
