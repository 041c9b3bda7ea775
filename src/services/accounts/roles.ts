import type { RoleName } from "../../db/schema";
import { replicate, shardOfAccount } from "../../db/shards";
import { fieldError, permissionDenied } from "../../http/errors";
import { reverse } from "../../http/urls";
import { enqueueGeocodeRetries } from "../../queues/geocode/message";
import type { Geocoder } from "../addresses/geocoding";
import { resolveAddressWithOutcome } from "../addresses/stored";
import type { AddressInput } from "../addresses/types";
import type { Principal } from "../auth/principal";
import { eventStatement } from "../events/outbox";
import { closeStreamsOfUser } from "../live";
import { type AccountRoleRow, getRole } from "./index";

/** `PATCH /account_roles/{id}/` (admins): the role, and the worker's vehicle and depots (contract §11). */
export type RolePatch = {
  role?: RoleName;
  is_active?: boolean;
  show_travel_estimates?: boolean;
  vehicle_capacity?: number[];
  start_address?: AddressInput | null;
  end_address?: AddressInput | null;
  on_duty?: boolean;
};

/**
 * Who may change what of a role: admins everything; managers `on_duty` (contract §28); the
 * role's own user `on_duty` only. Anything else is 403, and nothing is changed.
 */
export function mayPatchRole(p: Principal, row: { user_id: string }, patch: RolePatch): boolean {
  if (p.role === "admin") return true;
  const dutyOnly = Object.keys(patch).every((k) => k === "on_duty");
  if (!dutyOnly) return false;
  return p.role === "manager" || row.user_id === p.userId;
}

export const DEPOT_COLUMNS = ["start_address", "end_address"] as const;

export async function updateRole(
  env: Env,
  p: Principal,
  id: string,
  patch: RolePatch,
  deps: { geocoder?: Geocoder; baseUrl?: string } = {},
) {
  const baseUrl = deps.baseUrl ?? env.PUBLIC_BASE_URL ?? "";
  const row = await getRole(env, p.accountId, id);
  if (!mayPatchRole(p, row, patch)) throw permissionDenied();
  if (row.user_id === p.userId && ((patch.role && patch.role !== "admin") || patch.is_active === false)) {
    throw fieldError("role", "Admins cannot demote or deactivate themselves.");
  }
  const sets: string[] = [];
  const params: unknown[] = [];
  const set = (column: string, value: unknown) => {
    sets.push(`${column} = ?`);
    params.push(value);
  };
  if (patch.role !== undefined) set("role", patch.role);
  if (patch.is_active !== undefined) set("is_active", patch.is_active ? 1 : 0);
  if (patch.show_travel_estimates !== undefined)
    set("show_travel_estimates", patch.show_travel_estimates ? 1 : 0);
  if (patch.vehicle_capacity !== undefined) set("vehicle_capacity", JSON.stringify(patch.vehicle_capacity));
  let retry = false;
  for (const column of DEPOT_COLUMNS) {
    const input = patch[column];
    if (input === undefined) continue;
    if (input === null) {
      set(column, null);
      continue;
    }
    // Geocoded like a task's address: inline, and from the geocode queue when that fails.
    const resolved = await resolveAddressWithOutcome(env, input, deps.geocoder);
    retry ||= resolved.retry;
    set(column, JSON.stringify(resolved.address));
  }
  const now = Date.now();
  const dutyChanged = patch.on_duty !== undefined && Boolean(row.on_duty) !== patch.on_duty;
  if (patch.on_duty !== undefined) set("on_duty", patch.on_duty ? 1 : 0);
  if (sets.length) {
    set("updated_at", now);
    // `worker.duty_changed` (contract §28) goes with the change, in the account's database
    // (where events live), guarded by the old value so two toggles make two events, not four.
    const sharded = dutyChanged && (await shardOfAccount(env, p.accountId)) !== null;
    await replicate(env, { accountIds: [p.accountId] }, (db, isDirectory) => [
      db
        .prepare(`UPDATE account_roles SET ${sets.join(", ")} WHERE id = ? AND account_id = ?`)
        .bind(...params, id, p.accountId),
      ...(dutyChanged && isDirectory !== sharded
        ? [
            eventStatement(db, {
              type: "worker.duty_changed",
              objectId: row.user_id,
              accountId: p.accountId,
              now,
              data: {
                user: reverse(baseUrl, "users", row.user_id),
                on_duty: patch.on_duty,
                time: new Date(now).toISOString(),
              },
            }),
          ]
        : []),
    ]);
  }
  if (retry) await enqueueGeocodeRetries(env.GEOCODE_QUEUE, [{ accountId: p.accountId, accountRoleId: id }]);
  // A stream shows what its role may see: a new role or a disabled one closes it (contract §25).
  if (patch.role !== undefined || patch.is_active === false)
    await closeStreamsOfUser(env, p.accountId, row.user_id);
  return getRole(env, p.accountId, id);
}

export type { AccountRoleRow };
