import { inAccount } from "../../db/shards";
import { needsGeocoding } from "../../services/addresses/geocode-session";
import {
  type Geocoder,
  GeocodingUnavailableError,
  geocoderFromEnv,
} from "../../services/addresses/geocoding";
import type { AddressWithOutcome } from "../../services/addresses/stored";
import { guardedEvent } from "../../services/tasks/events";
import { eventRender, serializeTask } from "../../services/tasks/serialize";
import { addressOf, parseJson, type StoredAddress, type TaskRow } from "../../services/tasks/types";
import { casUpdateStatement, readTask, versionGuard } from "../../services/tasks/write";
import type { GeocodeMessage } from "./message";

/**
 * Consumer of fd-geocode: geocodes again what a write could not (contract: geocoding failure
 * never loses the task). Per message:
 *  - the record is gone, already geocoded, or its address changed to one that no longer needs
 *    it → ack (nothing to do);
 *  - found → the address, `geocoded_at` and `geocoding_provider` are stored (and
 *    `geocode_failed_at` cleared), with a `task.updated` event → ack;
 *  - not found → `geocode_failed_at` is set → ack (asking again would give the same answer);
 *  - temporary failure, or anything unexpected → retry with exponential back-off; after the
 *    queue's max_retries the message goes to the dead-letter queue (fd-geocode-dlq).
 *
 * The task write is a compare-and-set on `version` with its event in the same batch, so it
 * never overwrites a change made meanwhile (through the task's Durable Object or an order
 * upsert): on a conflict the message is retried and starts from the new state.
 */
export async function handleGeocodeBatch(
  batch: MessageBatch<GeocodeMessage>,
  base: Env,
  deps: { geocoder?: Geocoder } = {},
): Promise<void> {
  const env = base;
  let geocoder: Geocoder | null = null;
  try {
    geocoder = deps.geocoder ?? geocoderFromEnv(env);
  } catch (err) {
    console.error(JSON.stringify({ level: "error", msg: "geocoder misconfigured", error: String(err) }));
  }
  for (const message of batch.messages) {
    if (!geocoder) {
      message.retry({ delaySeconds: backoff(message.attempts) });
      continue;
    }
    try {
      // The message's account, on its own database (contract §24).
      const env = await inAccount(base, message.body.accountId);
      const outcome = message.body.taskId
        ? await geocodeTask(env, geocoder, message.body)
        : message.body.contactAddressId
          ? await geocodeAddressColumn(
              env,
              geocoder,
              "contact_address",
              message.body.contactAddressId,
              message.body.accountId,
            )
          : message.body.accountRoleId
            ? await geocodeAccountRole(env, geocoder, message.body)
            : "done";
      if (outcome === "retry") message.retry({ delaySeconds: backoff(message.attempts) });
      else message.ack();
    } catch (err) {
      if (!(err instanceof GeocodingUnavailableError)) {
        console.error(JSON.stringify({ level: "error", msg: "geocode retry failed", error: String(err) }));
      }
      message.retry({ delaySeconds: backoff(message.attempts) });
    }
  }
}

/** 30 s, 1 min, 2 min, ... capped at 1 h. */
export const backoff = (attempts: number) => Math.min(3600, 30 * 2 ** Math.max(0, attempts - 1));

type Outcome = "done" | "retry";

async function lookup(geocoder: Geocoder, a: StoredAddress) {
  return a.raw_address
    ? geocoder.geocode(a.raw_address)
    : geocoder.reverse(a.location!.coordinates[0], a.location!.coordinates[1]);
}

async function geocodeTask(env: Env, geocoder: Geocoder, m: GeocodeMessage): Promise<Outcome> {
  const row = await readTask(env.DB, m.accountId, m.taskId!);
  if (!row) return "done";
  const address = addressOf(row);
  if (!needsGeocoding(address, row.geocoded_at)) return "done";
  const now = Date.now();
  let next: TaskRow;
  if (address.raw_address && address.location) {
    // Text and point both given (e.g. by a task command's task_data): stored as sent, as on create.
    next = { ...row, address: JSON.stringify({ ...address, formatted_address: address.raw_address }) };
  } else {
    const result = await lookup(geocoder, address);
    next = result
      ? {
          ...row,
          address: JSON.stringify({
            ...address,
            formatted_address: result.formattedAddress,
            location: address.location ?? result.location,
            geocoding_provider: geocoder.name,
          } satisfies StoredAddress),
          geocoded_at: now,
          geocode_failed_at: null,
        }
      : {
          ...row,
          address: JSON.stringify({ ...address, geocoding_provider: geocoder.name } satisfies StoredAddress),
          geocode_failed_at: now,
        };
  }
  next.version = row.version + 1;
  next.updated_at = now;
  const [, update] = await env.DB.batch([
    guardedEvent(
      env.DB,
      {
        accountId: row.account_id,
        type: "task.updated",
        objectId: row.id,
        data: serializeTask(eventRender(m.baseUrl ?? ""), next),
        now,
      },
      versionGuard(row.id, row.version),
    ),
    casUpdateStatement(env.DB, next, row.version),
  ]);
  return update.meta.changes > 0 ? "done" : "retry";
}

/**
 * Addresses kept whole in a JSON column with their outcome times (contract §11 depots, contact
 * addresses): the columns the queue may write, named here so no message can name another.
 */
const ADDRESS_COLUMNS = {
  contact_address: { table: "contact_addresses", column: "address" },
  start_address: { table: "account_roles", column: "start_address" },
  end_address: { table: "account_roles", column: "end_address" },
} as const;

async function geocodeAddressColumn(
  env: Env,
  geocoder: Geocoder,
  which: keyof typeof ADDRESS_COLUMNS,
  id: string,
  accountId: string,
): Promise<Outcome> {
  const { table, column } = ADDRESS_COLUMNS[which];
  const row = await env.DB.prepare(
    `SELECT ${column} AS address, updated_at FROM ${table} WHERE id = ? AND account_id = ?`,
  )
    .bind(id, accountId)
    .first<{ address: string | null; updated_at: number }>();
  if (!row?.address) return "done";
  const stored = parseJson<AddressWithOutcome>(row.address, {} as AddressWithOutcome);
  const address: StoredAddress = {
    raw_address: stored.raw_address ?? "",
    formatted_address: stored.formatted_address ?? null,
    location: stored.location ?? null,
    geocoding_provider: stored.geocoding_provider ?? null,
  };
  if (!needsGeocoding(address, stored.geocoded_at ?? null)) return "done";
  const result = await lookup(geocoder, address);
  const now = Date.now();
  const next: AddressWithOutcome = result
    ? {
        ...address,
        formatted_address: result.formattedAddress,
        location: address.location ?? result.location,
        geocoding_provider: geocoder.name,
        geocoded_at: now,
        geocode_failed_at: null,
      }
    : { ...address, geocoding_provider: geocoder.name, geocoded_at: null, geocode_failed_at: now };
  // Compare-and-set on updated_at: a record edited meanwhile is retried from its new state.
  const r = await env.DB.prepare(
    `UPDATE ${table} SET ${column} = ?, updated_at = ? WHERE id = ? AND account_id = ? AND updated_at = ?`,
  )
    .bind(JSON.stringify(next), now, id, accountId, row.updated_at)
    .run();
  return r.meta.changes === 1 ? "done" : "retry";
}

async function geocodeAccountRole(env: Env, geocoder: Geocoder, m: GeocodeMessage): Promise<Outcome> {
  for (const which of ["start_address", "end_address"] as const) {
    if ((await geocodeAddressColumn(env, geocoder, which, m.accountRoleId!, m.accountId)) === "retry")
      return "retry";
  }
  return "done";
}
