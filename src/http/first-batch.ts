import type { Context } from "hono";
import { matchedRoutes } from "hono/route";
import type { Principal } from "../domain/principal";
import type { TokenCheck, TokenRow } from "../services/auth/tokens";
import type { AppEnv, PendingAuth } from "./context";
import { notAuthenticated } from "./errors";
import { resolveVersion } from "./versions";

/**
 * The request's first D1 batch (round trips are the edge's currency: a far region pays one
 * per sequential D1 call). Every authenticated request reads its token's row (revocation takes
 * effect on the next request, so nothing about a token's life is cached); a route registered
 * with `firstBatch` sends its first reads in the same batch as that check, for the account and
 * user the token claims, so a GET of one object is one round trip instead of two.
 *
 * What keeps this safe:
 * - only GET and HEAD requests are deferred: nothing is written before the token is settled;
 * - nothing read beside the check reaches the handler before the token's row is settled into
 *   a principal (or a 401), and reads made for a claim that turns out wrong (another account or
 *   user) are thrown away and made again for the principal the row proves;
 * - whatever the handler answers, a check it did not settle is settled before the answer
 *   leaves (`settleLeftover`): a bad token is a 401 even if the handler failed first (a 404, a
 *   400), as it is when the check runs alone before the handler.
 */

type Ctx = Context<AppEnv, any, any>;
type Handler = (...args: any[]) => unknown;

/** Whom the first reads are for: the principal, or before it is known, the token's claim. */
export type ReadScope = { accountId: string; userId: string };

const handlers = new WeakSet<Handler>();

/** Marks a route handler as one that starts with `firstBatch` (see defineRoute). */
export const markFirstBatch = (handler: Handler) => handlers.add(handler);

/**
 * Whether this request's token check may wait for the handler's first batch: a GET or HEAD of
 * a route that makes one, whose path ends with its slash (the trailing-slash rule needs the
 * version, and so the account, before the route runs), with a token that claims its account.
 */
export function mayDefer(c: Ctx, check: TokenCheck | null): check is PendingAuth["check"] {
  if (!check?.claim || (c.req.method !== "GET" && c.req.method !== "HEAD")) return false;
  if (!new URL(c.req.url).pathname.endsWith("/")) return false;
  return matchedRoutes(c).some((r) => handlers.has(r.handler as Handler));
}

/** The principal from the check's row: set on the request with its version, or a 401. */
function settle(c: Ctx, pending: PendingAuth, row: TokenRow | null): Principal {
  c.set("pendingAuth", null);
  const principal = pending.check.settle(row);
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
  if (!pending) {
    const principal = c.get("principal");
    if (!principal) throw notAuthenticated();
    return { principal, results: await db.batch(reads(principal)) };
  }
  const claim = pending.check.claim;
  const [token, ...results] = await db.batch([pending.check.statement, ...reads(claim)]);
  const principal = settle(c, pending, (token.results[0] as TokenRow | undefined) ?? null);
  if (principal.accountId === claim.accountId && principal.userId === claim.userId) {
    return { principal, results };
  }
  // The token acts for someone else than it claimed: what was read is not for this caller.
  return { principal, results: await db.batch(reads(principal)) };
}

/**
 * After the route: settles a check the handler left pending (it answered before its first
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
