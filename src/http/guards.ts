import type { RoleName } from "../db/schema";
import { isUuid } from "../lib/ids";
import type { Principal } from "../services/auth/principal";
import { notAuthenticated, notFound, permissionDenied } from "./errors";
import { assertNotPending } from "./first-batch";
import type { Ctx } from "./openapi";

export function requireUser(c: Ctx): Principal {
  assertNotPending(c);
  const p = c.get("principal");
  if (!p) throw notAuthenticated();
  return p;
}

export function requireRole(c: Ctx, ...roles: RoleName[]): Principal {
  const p = requireUser(c);
  if (!roles.includes(p.role)) throw permissionDenied();
  return p;
}

/** Path ids that are not UUIDs cannot name an object: 404, as DRF answers for a bad pk. */
export function pathId(c: Ctx): string {
  const id = c.req.param("id");
  if (!id || !isUuid(id)) throw notFound();
  return id.toLowerCase();
}
