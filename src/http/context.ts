import type { Principal } from "../domain/principal";
import type { TokenCheck } from "../services/auth/tokens";
import type { ApiVersion } from "./versions";

/** A token check left for the route's first D1 batch (see first-batch.ts). */
export type PendingAuth = {
  check: TokenCheck;
  /** The version declared in Accept (the account's pinned one applies once the token is settled). */
  declared: ApiVersion | null;
};

export type AppVariables = {
  requestId: string;
  /** `https://host` of this request: every hyperlink is built from it (see urls.ts). */
  baseUrl: string;
  version: ApiVersion;
  /** IANA zone from `Accept-Timezone`, or null for UTC output with `Z`. */
  timeZone: string | null;
  /** Resolved from the Authorization header, or null for anonymous callers. */
  principal: Principal | null;
  /**
   * The token's check while it waits for the route's first batch (GET of one object): the
   * principal is null until then, and guards refuse to read it.
   */
  pendingAuth: PendingAuth | null;
  /**
   * The request's D1 sessions (db/session.ts): the one it started in (the directory), then the
   * account's database once the token names it (http/account-scope.ts). Each one's bookmark,
   * tagged with its database, is the answer's; their round trips add up.
   * `constraint` is where a session on a database starts: the bookmark sent for it, else none.
   */
  d1: {
    constraint: (database: string) => string;
    base: Env;
    sessions: import("../db/session").MeteredSession[];
  };
  /** The rate-limit count, started early (see middleware.ts); null when not counted. */
  rateLimitHit: Promise<import("./rate-limit").RateLimitResult> | null;
};

export type AppEnv = { Bindings: Env; Variables: AppVariables };
