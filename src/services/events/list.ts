import { EVENT_UUIDS, selectColumns, uuidBytes } from "../../db/uuid-bytes";
import { type FieldErrors, notFound, ValidationError } from "../../http/errors";
import { DEFAULT_PAGE_SIZE } from "../../http/pagination";
import { isUuid } from "../../lib/ids";
import { settleSeconds } from "../../lib/settle";
import { EVENT_TYPES } from "./outbox";
import { BASE_JOIN, eventPageSql, PAYLOAD_COLUMNS, type StoredPayload, withTexts } from "./payloads";

/** An event with its payload's JSON text, unpacked from how it is stored (./payloads.ts). */
export type EventRow = { id: string; account_id: string; type: string; text: string; created_at: number };
type StoredRow = Omit<EventRow, "text"> & StoredPayload;
const SELECT = `SELECT ${selectColumns(["id", "account_id", "type"], EVENT_UUIDS, "e")}, ${PAYLOAD_COLUMNS}, e.created_at
  FROM events e ${BASE_JOIN}`;

export type EventListQuery = { after?: string; before?: string; type?: string; page_size?: number };

/**
 * `GET /events/`: an account's events by id (UUIDv7, the order they happened), walked with
 * `after`/`before` event ids rather than opaque cursors, so a client keeps just the id of the
 * last event it processed. Events younger than the settle delay are left out.
 */
export async function listEvents(env: Env, accountId: string, q: EventListQuery, url: string) {
  const errors: FieldErrors = {};
  for (const key of ["after", "before"] as const) {
    if (q[key] !== undefined && !isUuid(q[key])) errors[key] = ["Invalid cursor: an event id is expected."];
  }
  if (q.after && q.before) errors.non_field_errors = ["Give `after` or `before`, not both."];
  const types = q.type
    ?.split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  const unknown = types?.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t)) ?? [];
  if (unknown.length) errors.type = unknown.map((t) => `"${t}" is not a valid event name.`);
  // Sent empty, the filter names no event: malformed, as an empty filter is on every list.
  else if (types?.length === 0) errors.type = ['"" is not a valid event name.'];
  if (Object.keys(errors).length) throw new ValidationError(errors);

  const size = q.page_size ?? DEFAULT_PAGE_SIZE;
  const where = [`e.account_id = ${uuidBytes()}`, "e.created_at <= ?"];
  const params: unknown[] = [accountId, Date.now() - settleSeconds(env) * 1000];
  if (types?.length) {
    where.push("e.type IN (SELECT value FROM json_each(?))");
    params.push(JSON.stringify(types));
  }
  const backwards = !!q.before;
  if (q.after) {
    where.push(`e.id > ${uuidBytes()}`);
    params.push(q.after.toLowerCase());
  }
  if (q.before) {
    where.push(`e.id < ${uuidBytes()}`);
    params.push(q.before.toLowerCase());
  }
  const { results } = await env.DB.prepare(
    eventPageSql(["id", "account_id", "type", "created_at"], where.join(" AND "), backwards ? "DESC" : "ASC"),
  )
    .bind(...params, size + 1)
    .all<StoredRow>();
  // Unpacked before the look-ahead row is cut: it may be the base of the page's last events.
  const all: EventRow[] = withTexts(results);
  const more = all.length > size;
  const rows = more ? all.slice(0, size) : all;
  if (backwards) rows.reverse();

  const link = (key: "after" | "before", id: string) => {
    const u = new URL(url);
    u.searchParams.delete("after");
    u.searchParams.delete("before");
    u.searchParams.set(key, id);
    return u.toString();
  };
  const first = rows[0];
  const last = rows[rows.length - 1];
  let next: string | null = null;
  let previous: string | null = null;
  if (backwards) {
    if (last) next = link("after", last.id);
    if (more && first) previous = link("before", first.id);
  } else {
    if (more && last) next = link("after", last.id);
    if (q.after && first) previous = link("before", first.id);
  }
  return { next, previous, rows };
}

export async function getEvent(env: Env, accountId: string, id: string): Promise<EventRow> {
  const row = await env.DB.prepare(`${SELECT} WHERE e.id = ${uuidBytes()} AND e.account_id = ${uuidBytes()}`)
    .bind(id, accountId)
    .first<StoredRow>();
  if (!row) throw notFound();
  return withTexts([row])[0];
}
