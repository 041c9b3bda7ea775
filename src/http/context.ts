import type { Principal } from "../domain/principal";
import type { ApiVersion } from "./versions";

export type AppVariables = {
  requestId: string;
  /** `https://host` of this request: every hyperlink is built from it (see urls.ts). */
  baseUrl: string;
  version: ApiVersion;
  /** IANA zone from `Accept-Timezone`, or null for UTC output with `Z`. */
  timeZone: string | null;
  /** Resolved from the Authorization header, or null for anonymous callers. */
  principal: Principal | null;
  /** The rate-limit count, started early (see middleware.ts); null when not counted. */
  rateLimitHit: Promise<import("./rate-limit").RateLimitResult> | null;
};

export type AppEnv = { Bindings: Env; Variables: AppVariables };
