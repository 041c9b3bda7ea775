import { Buffer } from "node:buffer";
import { EVENT_UUIDS, selectColumns, uuidText } from "../../db/uuid-bytes";
import { needsBase, unpackJsonText } from "../../formats/packed-json";

/**
 * Reading event payloads as stored. An event packed against a base (formats/packed-json.ts,
 * format 2) names its base in `base_id`: another event of the same transaction and account,
 * of the same statement with a larger id, or of a chunk of commands with a smaller one
 * (events/outbox.ts); retention stores such an event whole again before it removes its base
 * (retention/sources.ts). Every reader selects the base's payload beside the event's with
 * these pieces (`events e` in the FROM clause).
 */
export const PAYLOAD_COLUMNS = `${onWire("e.payload")} AS payload, ${uuidText("e.base_id")} AS base_id, ${onWire("b.payload")} AS base_payload`;
export const BASE_JOIN = baseJoin("e");

/** The base `b` of the events aliased `alias`. */
function baseJoin(alias: string) {
  return `LEFT JOIN events b ON b.account_id = ${alias}.account_id AND b.id = ${alias}.base_id`;
}

/**
 * A page of events (`/events/`, the live stream's fan-out): `columns` of `events e` where
 * `where` holds, in id order, at most `?` (the last parameter) rows, with their payloads and,
 * for an event read with a base, the base's payload only when the base is not on the page
 * itself (usually it is: the write's other events, next to it), so the page carries each
 * task once. `payloadTexts` then finds the base among the rows.
 */
export function eventPageSql(columns: readonly string[], where: string, order: "ASC" | "DESC"): string {
  const own = columns.filter((c) => c !== "account_id");
  return `WITH page AS MATERIALIZED (
      SELECT ${["account_id", ...own].map((c) => `e.${c}`).join(", ")}, e.payload, e.base_id
      FROM events e WHERE ${where} ORDER BY e.id ${order} LIMIT ?)
    SELECT ${selectColumns(columns, EVENT_UUIDS, "p")}, ${onWire("p.payload")} AS payload, ${uuidText("p.base_id")} AS base_id,
      CASE WHEN p.base_id IN (SELECT id FROM page) THEN NULL ELSE ${onWire("b.payload")} END AS base_payload
    FROM page p ${baseJoin("p")}
    ORDER BY p.id ${order}`;
}

/**
 * A payload as it crosses from D1: packed bytes as hex text (D1 answers a BLOB as an array of
 * numbers, about four characters of JSON per byte, which took longer to read than the JSON text
 * it replaced; hex is two), JSON text stored before packing as is. Hex of a packed payload
 * starts with its format byte (01, 02); JSON text of an object starts with "{".
 */
function onWire(column: string) {
  return `CASE WHEN typeof(${column}) = 'blob' THEN hex(${column}) ELSE ${column} END`;
}

const fromWire = (v: unknown) => (typeof v === "string" && /^0[12]/.test(v) ? Buffer.from(v, "hex") : v);

export type StoredPayload = {
  id: string;
  payload: unknown;
  base_id?: string | null;
  base_payload?: unknown;
};

/** One event's JSON text. */
export const payloadText = (r: StoredPayload) =>
  unpackJsonText(fromWire(r.payload), fromWire(r.base_payload));

/**
 * The JSON text of many events (a page, a batch to fan out), each base unpacked once: a
 * write's events usually share one, often on the same page.
 */
export function payloadTexts(rows: readonly StoredPayload[]): string[] {
  const texts = new Map<string, string>();
  const own = new Map(rows.map((r) => [r.id, r]));
  const textOf = (r: StoredPayload): string => {
    let t = texts.get(r.id);
    if (t !== undefined) return t;
    const payload = fromWire(r.payload);
    if (needsBase(payload) && r.base_id) {
      const base = own.get(r.base_id);
      const baseText = base
        ? textOf(base)
        : (texts.get(r.base_id) ?? unpackJsonText(fromWire(r.base_payload)));
      texts.set(r.base_id, baseText);
      t = unpackJsonText(payload, { text: baseText });
    } else {
      t = unpackJsonText(payload);
    }
    texts.set(r.id, t);
    return t;
  };
  return rows.map(textOf);
}

/** Rows with their payloads' JSON text in `text`, the stored payload fields gone (./payloadTexts). */
export function withTexts<T extends StoredPayload>(
  rows: readonly T[],
): (Omit<T, "payload" | "base_id" | "base_payload"> & { text: string })[] {
  const texts = payloadTexts(rows);
  return rows.map(({ payload: _p, base_id: _b, base_payload: _bp, ...row }, i) => ({
    ...row,
    text: texts[i],
  }));
}
