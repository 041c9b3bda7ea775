import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors as honoCors } from "hono/cors";
import { matchedRoutes } from "hono/route";
import { getPath } from "hono/utils/url";
import { formatBookmarks, inSession, type MeteredSession, parseBookmarks, sessionOf } from "../db/session";
import { DIRECTORY, directoryOf, shardNames } from "../db/shards";
import type { Principal } from "../domain/principal";
import { checkToken, type TokenCheck, type TokenRow, tokenAccount } from "../services/auth/tokens";
import { scopeToAccount } from "./account-scope";
import type { AppEnv } from "./context";
import { ApiError, notFound, renderError } from "./errors";
import { mayDefer, refuseWhileMoving, settleLeftover } from "./first-batch";
import { logLine } from "./log";
import { consume, type RateLimitResult } from "./rate-limit";
import { validateTimeZone } from "./timezones";
import { FILES_PREFIX } from "./urls";
import { atLeast, CURRENT_VERSION, parseVersion, resolveVersion, versionFromAccept } from "./versions";

export const JSON_BODY_LIMIT = 10 * 1024 * 1024;
/** The one rate-limit policy's name in the RateLimit header fields. */
export const RATE_LIMIT_POLICY = "default";

/**
 * First in the chain: every response, errors included, carries `X-Request-Id` and
 * `X-API-Version` (API versions are declared in `Accept`; the one in effect is echoed), and
 * every request leaves one structured log line.
 */
export const requestContext: MiddlewareHandler<AppEnv> = async (c, next) => {
  const started = Date.now();
  const incoming = c.req.header("X-Request-Id");
  const requestId = incoming && /^[\w.-]{8,128}$/.test(incoming) ? incoming : crypto.randomUUID();
  c.set("requestId", requestId);
  const url = new URL(c.req.url);
  const path = url.pathname;
  c.set("baseUrl", url.origin);
  c.set("principal", null);
  c.set("pendingAuth", null);
  c.set("rateLimitHit", null);
  c.set("timeZone", null);
  // Every request runs in a D1 session (contract §24): reads near the caller, its writes and
  // what it reads after them in order, and a bookmark back for the next request to read from.
  // Each database's session starts from the bookmark sent for that database, if any (db/session.ts:
  // anything else in the header is ignored, not refused).
  const sent = parseBookmarks(c.req.header("X-D1-Bookmark"));
  const constraint = (database: string) => sent.get(database) ?? "first-unconstrained";
  const d1 = { constraint, base: c.env, sessions: [] as MeteredSession[] };
  const session = inSession(c.env, constraint(DIRECTORY), DIRECTORY);
  d1.sessions.push(session.db);
  c.set("d1", d1);
  c.env = session.env;
  await next();
  // API answers carry tokens and account data: never cached by a shared or browser cache
  // (RFC 9111 §5.2.2.5), never sniffed as another type. Stored files have their own caching.
  if (!path.startsWith(`${FILES_PREFIX}/`)) {
    if (!c.res.headers.has("Cache-Control")) c.res.headers.set("Cache-Control", "no-store");
    c.res.headers.set("X-Content-Type-Options", "nosniff");
  }
  const version = (c.get("version") ?? parseVersion(CURRENT_VERSION)!).text;
  c.res.headers.set("X-Request-Id", requestId);
  c.res.headers.set("X-API-Version", version);
  const bookmark = formatBookmarks(d1.sessions);
  const trips = d1.sessions.reduce((n, s) => n + s.trips, 0);
  if (bookmark) c.res.headers.set("X-D1-Bookmark", bookmark);
  if (c.env.EXPOSE_D1_ROUND_TRIPS === "true") c.res.headers.set("X-D1-Round-Trips", String(trips));
  const principal = c.get("principal");
  logLine({
    type: "request",
    request_id: requestId,
    method: c.req.method,
    route: routePattern(c),
    status: c.res.status,
    duration_ms: Date.now() - started,
    version,
    d1_round_trips: trips,
    account: principal?.accountId ?? null,
    user: principal?.userId ?? null,
    // A hijack token's requests are the user's, and name the admin acting (contract §14).
    ...(principal?.actorUserId ? { actor: principal.actorUserId } : {}),
  });
};

/**
 * The route pattern that answered (`/tasks/:id/`), never the path itself: paths and query
 * strings may carry capabilities (stored-file keys, signed forms) that must stay out of logs.
 */
function routePattern(c: Parameters<MiddlewareHandler<AppEnv>>[0]): string {
  const routes = matchedRoutes(c).filter((r) => r.method !== "ALL");
  return routes.at(-1)?.path ?? "(unmatched)";
}

export const CORS_OPTIONS = {
  allowMethods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
  allowHeaders: [
    "Authorization",
    "Content-Type",
    "Accept",
    "Accept-Timezone",
    "Accept-Language",
    "Prefer",
    "X-Request-Id",
    "X-D1-Bookmark",
    "If-None-Match",
    "If-Modified-Since",
    "Range",
  ],
  exposeHeaders: [
    "X-Request-Id",
    "X-API-Version",
    "X-D1-Bookmark",
    "Location",
    "Retry-After",
    "RateLimit",
    "RateLimit-Policy",
    "RateLimit-Limit",
    "RateLimit-Remaining",
    "RateLimit-Reset",
    "ETag",
    "Content-Range",
  ],
  maxAge: 600,
};

/**
 * CORS (the Fetch standard's CORS protocol) of the authenticated API: only the origins listed in
 * `CORS_ORIGINS` (comma-separated; `*` allows any), except the anonymous endpoints a browser
 * client needs before it has a token, which answer any origin. Tokens travel in
 * `Authorization`, never in cookies, so no request is made with ambient credentials.
 */
export const apiCors: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.req.header("Origin")) return next();
  const path = new URL(c.req.url).pathname;
  const allowed = (c.env.CORS_ORIGINS ?? "")
    .split(",")
    .map((o) => o.trim())
    .filter(Boolean);
  return honoCors({
    ...CORS_OPTIONS,
    origin: (origin) =>
      isPublicPath(path) || allowed.includes("*") ? "*" : allowed.includes(origin) ? origin : null,
  })(c, next);
};

/** CORS of the sub-apps that carry no credentials (the document, the docs, storage): any origin. */
export const publicCors: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.req.header("Origin")) return next();
  return honoCors({ ...CORS_OPTIONS, origin: "*" })(c, next);
};

/** API paths a browser may call from any origin (no token involved). */
const PUBLIC_PATHS = new Set(["/", "/health/", "/authenticate/", "/accounts/"]);
const isPublicPath = (path: string) => PUBLIC_PATHS.has(path) || PUBLIC_PATHS.has(`${path}/`);

/**
 * A sign-in needs no token (contract §2): a client that keeps an expired one in its default
 * headers must still be able to sign in again, so a bad token presented there is ignored (a
 * good one still pins the caller's version; the sign-in limits and the rate limit still count
 * the attempt).
 */
const SIGN_IN_PATHS = new Set(["/authenticate/", "/authenticate"]);

/**
 * Authentication is resolved before the version because an undeclared version is the one
 * pinned on the caller's account. A bad token is 401 here; a missing one is decided per route.
 * A route that makes a first batch (http/first-batch.ts: a GET of one object, a single
 * command) may leave the token's row to that batch: what needs no database (the header, the
 * JWT's signature and expiry) is checked here all the same, and the row is settled before
 * anything is answered.
 */
export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const declared = versionFromAccept(c.req.header("Accept"));
  // The rate-limit count runs alongside token resolution (both are a round trip away); it is
  // keyed by the presented token itself, so it needs nothing from the resolution.
  c.set(
    "rateLimitHit",
    // A read run again after a changed token (see `speculate`) was counted once already.
    countedAlready.has(c.req.raw)
      ? (countedAlready.get(c.req.raw) ?? null)
      : startRateLimit(c.env, c.req.header("Authorization"), c.req.header("CF-Connecting-IP")),
  );
  const signIn = c.req.method === "POST" && SIGN_IN_PATHS.has(getPath(c.req.raw));
  const checking = checkToken(c.env, c.req.header("Authorization"));
  const presented = signIn ? await checking.catch(() => null) : await checking;
  // The token names the account; its request runs on that account's database (contract §24).
  // A sign-in runs on the directory, which holds every user and token.
  const check = presented && !signIn ? await onAccountDatabase(c, presented) : presented;
  if (check && mayDefer(c, check)) {
    c.set("pendingAuth", { check, declared });
    await next();
    await settleLeftover(c);
    return;
  }
  const session = sessionOf(c.env.DB);
  if (check && !signIn && session && speculates(c, check)) {
    await speculate(c, next, check, declared, session);
    return;
  }
  const resolving = (async () => (check ? check.settle(await check.statement.first<TokenRow>()) : null))();
  const principal = signIn ? await resolving.catch(() => null) : await resolving;
  if (principal && !signIn) refuseWhileMoving(c.req.method, principal);
  c.set("principal", principal);
  c.set("version", resolveVersion(declared, principal?.account.apiVersion));
  await next();
};

/**
 * The token's check, on the database of the account it acts in: the JWT's `acc` or what this
 * isolate settled the token into before, else the directory's word (one lookup per token and
 * isolate). With no shard configured every account lives in the directory: nothing to look up.
 */
async function onAccountDatabase(c: Parameters<MiddlewareHandler<AppEnv>>[0], check: TokenCheck) {
  const base = c.get("d1").base;
  if (shardNames(base).length === 0) return check;
  const accountId = check.claim?.accountId ?? (await tokenAccount(directoryOf(base), check.key));
  if (!accountId || !(await scopeToAccount(c, accountId))) return check;
  return check.on(c.env.DB);
}

/**
 * A read (GET or HEAD, not a WebSocket upgrade) with a token this isolate has settled before,
 * on a route that does not make a first batch of its own (those defer the check themselves).
 */
function speculates(c: Parameters<MiddlewareHandler<AppEnv>>[0], check: TokenCheck): boolean {
  return (
    (c.req.method === "GET" || c.req.method === "HEAD") &&
    check.known !== null &&
    !c.req.header("Upgrade") &&
    !noSpeculation.has(c.req.raw)
  );
}

/**
 * A read runs for the principal this isolate last settled the token into, while the token's
 * row rides on the route's first D1 call (one round trip for both: contract §24's round trips).
 * Nothing leaves before the row is settled: a bad token answers 401 whatever the route said,
 * and a row that changed since (another role, another account) runs the request again for the
 * principal it proves, the first answer thrown away. A write, which a read route should not
 * make, waits for the row and refuses to run on a changed one.
 */
async function speculate(
  c: Parameters<MiddlewareHandler<AppEnv>>[0],
  next: () => Promise<void>,
  check: TokenCheck,
  declared: ReturnType<typeof versionFromAccept>,
  session: MeteredSession,
) {
  const known = check.known!;
  c.set("principal", known.principal);
  c.set("version", resolveVersion(declared, known.principal.account.apiVersion));
  const carried = session.ride(check.statement);
  let verdict: Promise<{ principal: Principal; same: boolean }> | null = null;
  const settled = () =>
    (verdict ??= (async () => {
      const row = ((await carried.result()).results[0] ?? null) as TokenRow | null;
      const principal = check.settle(row);
      return { principal, same: row?.fingerprint === known.proof.fingerprint };
    })());
  session.holdWritesUntil(async () => {
    if (!(await settled()).same)
      throw new Error("token changed under a speculative read; the request runs again");
  });
  try {
    await next();
  } finally {
    session.holdWritesUntil(null);
  }
  let outcome: { principal: Principal; same: boolean };
  try {
    outcome = await settled();
  } catch (err) {
    c.set("principal", null);
    c.set("version", resolveVersion(declared, undefined));
    c.res = renderError(err, c);
    return;
  }
  if (!outcome.same) {
    c.set("principal", outcome.principal);
    c.set("version", resolveVersion(declared, outcome.principal.account.apiVersion));
    const again = new Request(c.req.raw);
    noSpeculation.add(again);
    countedAlready.set(again, c.get("rateLimitHit"));
    c.res = await redispatch!(again, c.env, executionCtxOf(c));
  }
}

/** Requests run again after a changed token: they settle their token first, as before. */
const noSpeculation = new WeakSet<Request>();
const countedAlready = new WeakMap<Request, Promise<RateLimitResult> | null>();
let redispatch:
  | ((request: Request, env: Env, ctx: ExecutionContext | undefined) => Promise<Response>)
  | null = null;

/** The API app, for the rare read that must run again (see `speculate`). */
export function setRedispatch(fetch: NonNullable<typeof redispatch>) {
  redispatch = fetch;
}

function executionCtxOf(c: Parameters<MiddlewareHandler<AppEnv>>[0]): ExecutionContext | undefined {
  try {
    return c.executionCtx as ExecutionContext;
  } catch {
    return undefined;
  }
}

/**
 * The sub-apps outside the API (storage, stored files, the document and docs) take no token:
 * the signed form, the key in the URL or nothing is the authorization, and a stale token there
 * must not be a 401. The version is the declared one or the current one.
 */
export const anonymousCaller: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.set("version", resolveVersion(versionFromAccept(c.req.header("Accept")), undefined));
  await next();
};

/**
 * Every API path ends with a slash. From 2.10.0 a path without it is 404; before, it is
 * served as if the slash were there (routing appends it, see `routingPath`), so POST bodies
 * survive where a redirect would lose them.
 */
export const trailingSlash: MiddlewareHandler<AppEnv> = async (c, next) => {
  const path = new URL(c.req.url).pathname;
  if (!path.endsWith("/") && atLeast(c.get("version"), "2.10.0")) {
    throw notFound("Not found. Paths end with a trailing slash.");
  }
  await next();
};

export const timeZone: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.set("timeZone", validateTimeZone(c.req.header("Accept-Timezone")));
  await next();
};

/**
 * Starts the per-token rate-limit count (contract §10) for this request, in a Durable Object per
 * token so every isolate sees one counter (see rate-limit.ts). Anonymous callers are counted per
 * client address. Stored files are not API calls (a page of 50 thumbnails is 50 requests): the
 * storage sub-app registers `rateLimit` on its upload path only.
 */
function startRateLimit(
  env: Env,
  authorization: string | undefined,
  clientIp: string | undefined,
): Promise<RateLimitResult> | null {
  const limit = Number(env.RATE_LIMIT_PER_SECOND || 20);
  if (!(limit > 0)) return null;
  const token = authorization?.split(/\s+/)[1];
  const hit = consume(env, token ? `token:${token}` : `ip:${clientIp ?? "local"}`, limit);
  hit.catch(() => undefined); // awaited by `rateLimit`; never an unhandled rejection meanwhile
  return hit;
}

/**
 * Headers follow the IETF RateLimit header fields draft (draft-ietf-httpapi-ratelimit-headers)
 * in its current form: `RateLimit-Policy: "default";q=<quota>;w=<window s>` and
 * `RateLimit: "default";r=<remaining>;t=<seconds to reset>`, both Structured Fields naming the
 * policy. The draft's earlier fields (`RateLimit-Limit`, `-Remaining`, `-Reset`) are kept for
 * clients written against them. Past the limit: 429 with Retry-After.
 */
export const rateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  // The API chain starts the count in `authenticate` (beside token resolution); others start it here.
  const pending =
    c.get("rateLimitHit") ??
    startRateLimit(c.env, c.req.header("Authorization"), c.req.header("CF-Connecting-IP"));
  if (!pending) return next();
  const r = await pending;
  const limit = r.limit;
  const reset = String(Math.max(1, Math.ceil(r.resetMs / 1000)));
  const headers = {
    "RateLimit-Policy": `"${RATE_LIMIT_POLICY}";q=${limit};w=1`,
    RateLimit: `"${RATE_LIMIT_POLICY}";r=${r.remaining};t=${reset}`,
    "RateLimit-Limit": String(limit),
    "RateLimit-Remaining": String(r.remaining),
    "RateLimit-Reset": reset,
  };
  if (!r.allowed) {
    throw new ApiError(
      429,
      "throttled",
      `Request was throttled. Expected available in ${headers["RateLimit-Reset"]} second(s).`,
      {
        ...headers,
        "Retry-After": headers["RateLimit-Reset"],
      },
    );
  }
  await next();
  for (const [k, v] of Object.entries(headers)) c.res.headers.set(k, v);
};

/** 413 before a JSON body is read whole: Content-Length is checked first, streams are counted. */
export const jsonBodyLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  return bodyLimit({
    maxSize: JSON_BODY_LIMIT,
    onError: () => {
      throw new ApiError(413, "request_too_large", `Request body is larger than ${JSON_BODY_LIMIT} bytes.`);
    },
  })(c, next);
};
