import { needsBase, unpackJsonText } from "../../formats/packed-json";

/**
 * Reading event payloads as stored. An event packed against a base (formats/packed-json.ts,
 * format 2) names its base in `base_id`: another event of the same write and account, with a
 * larger id, so retention (which takes events in id order) never removes a base before the
 * events that read with it. Every reader selects the base's payload beside the event's with
 * these pieces (`events e` in the FROM clause).
 */
export const PAYLOAD_COLUMNS = "e.payload, e.base_id, b.payload AS base_payload";
export const BASE_JOIN = "LEFT JOIN events b ON b.account_id = e.account_id AND b.id = e.base_id";

export type StoredPayload = {
  id: string;
  payload: unknown;
  base_id?: string | null;
  base_payload?: unknown;
};

/** One event's JSON text. */
export const payloadText = (r: StoredPayload) => unpackJsonText(r.payload, r.base_payload);

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
    if (needsBase(r.payload) && r.base_id) {
      const base = own.get(r.base_id);
      const baseText = base ? textOf(base) : (texts.get(r.base_id) ?? unpackJsonText(r.base_payload));
      texts.set(r.base_id, baseText);
      t = unpackJsonText(r.payload, { text: baseText });
    } else {
      t = unpackJsonText(r.payload);
    }
    texts.set(r.id, t);
    return t;
  };
  return rows.map(textOf);
}
