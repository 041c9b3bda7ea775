import type { Context } from "hono";
import { matchedRoutes } from "hono/route";
import type { Principal } from "../domain/principal";
import type { TokenCheck, TokenRow, WriteProof } from "../services/auth/tokens";
import type { AppEnv, PendingAuth } from "./context";
import { notAuthenticated, serviceUnavailable } from "./errors";
import { resolveVersion } from "./versions";

/**
 * The request's first D1 batch (round trips are the edge's currency: a far region pays one
 * per sequential D1 call). Every authenticated request reads its token's row (revocation takes
 * effect on the next request, so nothing about a token's life is cached); a route registered
 * with `firstBatch` makes that read part of its own first batch instead of a round trip before
 * it:
 * - `"reads"` (a GET of one object): the route's first reads go in one batch with the check,
 *   for the account and user the token claims (`firstBatch`);
 * - `"writes"` (a single command): the check travels with the route's first write, to the
 *   batch the task's Durable Object makes, as a WriteProof (services/auth/tokens.ts) that
 *   guards every statement of that batch; the route settles the row the batch read
 *   (`settleWith`).
 *
 * What keeps this safe:
 * - a read is deferred only for GET and HEAD; a write only with a proof, which this isolate has
 *   only for a token it settled before, and which lets nothing be written unless the token's
 *   row is still the one that settled then;
 * - nothing read or written beside the check reaches the caller before the token's row is
 *   settled into a principal (or a 401), and reads made for a claim that turns out wrong
 *   (another account or user) are thrown away and made again for the principal the row proves;
 * - whatever the route answers, a check it did not settle is settled before the answer leaves
 *   (`settleLeftover`): a bad token is a 401 even if the route failed first (a 404, a 400), as
 *   it is when the check runs alone before the route.
 */

type Ctx = Context<AppEnv, any, any>;
type Handler = (...args: any[]) => unknown;
export type FirstBatchMode = "reads" | "writes";

/** Whom the first reads are for: the principal, or before it is known, the token's claim. */
export type ReadScope = { accountId: string; userId: string };

const modes = new WeakMap<Handler, FirstBatchMode>();

/** Marks a route handler as one that starts with its first batch (see defineRoute). */
export const markFirstBatch = (handler: Handler, mode: FirstBatchMode) => modes.set(handler, mode);

/**
 * Whether this request's token check may wait for the route's first batch: a route that makes
 * one, whose path ends with its slash (the trailing-slash rule needs the version, and so the
 * account, before the route runs); for reads a GET or HEAD with a token that claims its
 * account, for writes a token this isolate has settled before (it has a proof to carry).
 */
export function mayDefer(c: Ctx, check: TokenCheck | null): boolean {
  if (!check || !new URL(c.req.url).pathname.endsWith("/")) return false;
  const method = c.req.method;
  const mode = matchedRoutes(c)
    .map((r) => modes.get(r.handler as Handler))
    .find(Boolean);
  if (mode === "reads") return (method === "GET" || method === "HEAD") && check.claim !== null;
  // A token whose account was moving when this isolate last settled it checks first: its
  // write is then answered 503, or made once the move is over.
  if (mode === "writes")
    return method === "POST" && check.known !== null && !check.known.principal.account.movingUntil;
  return false;
}

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * While the account moves to another database (contract §24, services/accounts/move.ts) its
 * writes wait, 503 with `Retry-After`, so nothing is written to the copy being left; reads go on.
 */
export function refuseWhileMoving(method: string, principal: Principal, now = Date.now()) {
  const moving = principal.account.movingUntil;
  if (moving && !READS.has(method))
    throw serviceUnavailable(
      "This account is moving to another database; its writes resume within a minute. Retry after the time given.",
      (moving - now) / 1000,
    );
}

/** The principal from the check's row: set on the request with its version, or a 401. */
function settle(c: Ctx, pending: PendingAuth, row: TokenRow | null, now?: number): Principal {
  c.set("pendingAuth", null);
  const principal = pending.check.settle(row, now);
  refuseWhileMoving(c.req.method, principal, now);
  c.set("principal", principal);
  c.set("version", resolveVersion(pending.declared, principal.account.apiVersion));
  return principal;
}

/**
 * Runs `reads` in one D1 batch with the token's check when it is still pending, and returns
 * their results once the principal is known. `reads` gets the scope to read for: the token's
 * claim the first time, the principal itself when the claim was wrong (or the check had already
 * run). A request without a token is 401, as `requireUser` answers.
 */
export async function firstBatch(
  c: Ctx,
  reads: (scope: ReadScope) => D1PreparedStatement[],
): Promise<{ principal: Principal; results: D1Result[] }> {
  const db = c.env.DB;
  const pending = c.get("pendingAuth");
  const claim = pending?.check.claim;
  if (!pending || !claim) {
    const principal = await currentPrincipal(c);
    return { principal, results: await db.batch(reads(principal)) };
  }
  const [token, ...results] = await db.batch([pending.check.statement, ...reads(claim)]);
  const principal = settle(c, pending, (token.results[0] as TokenRow | undefined) ?? null);
  if (principal.accountId === claim.accountId && principal.userId === claim.userId) {
    return { principal, results };
  }
  // The token acts for someone else than it claimed: what was read is not for this caller.
  return { principal, results: await db.batch(reads(principal)) };
}

/**
 * For a route whose first write carries the token's check: the principal this isolate last
 * settled the token into (to plan the write with) and the proof the write must carry, or null
 * when the check is not pending (it ran before the route; use `currentPrincipal`).
 */
export function writeProof(c: Ctx): { principal: Principal; proof: WriteProof } | null {
  return c.get("pendingAuth")?.check.known ?? null;
}

/**
 * Settles the pending check with the token's row as the write's batch read it (at the batch's
 * `now`), or, when the write did not get as far as its batch (`token` undefined: it answered
 * before writing, or its batch failed), with a query of its own. The principal, or a 401.
 */
export async function settleWith(c: Ctx, token: { row: TokenRow | null; now: number } | undefined) {
  const pending = c.get("pendingAuth");
  if (!pending || !token) return currentPrincipal(c);
  return settle(c, pending, token.row, token.now);
}

/** The principal, settling a pending check first (one round trip); 401 without a token. */
export async function currentPrincipal(c: Ctx): Promise<Principal> {
  await settleLeftover(c);
  const principal = c.get("principal");
  if (!principal) throw notAuthenticated();
  return principal;
}

/**
 * After the route: settles a check the route left pending (it answered before its first
 * batch, e.g. a 404 for a malformed id or a 400), so a bad token is still a 401.
 */
export async function settleLeftover(c: Ctx): Promise<void> {
  const pending = c.get("pendingAuth");
  if (!pending) return;
  settle(c, pending, await pending.check.statement.first<TokenRow>());
}

/** For guards: a handler that reads the principal before its first batch is a bug, not a 401. */
export function assertNotPending(c: Ctx) {
  if (c.get("pendingAuth")) throw new Error("principal read before the request's first batch (firstBatch)");
}
