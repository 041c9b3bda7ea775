/**
 * Event payloads as stored (contract §23: what a task leaves behind stays small). An event
 * carries the whole task inline (contract §9), about 1.2 KB of JSON, eleven times over a
 * delivered task's life; most of it is the same keys, URL prefixes and values every time. The
 * payload is stored as raw DEFLATE (RFC 1951) with a preset dictionary of those common strings
 * (RFC 1950 §2.2's FDICT idea, without the zlib wrapper): a task then takes about a quarter of
 * its JSON. The first byte says the format, so the dictionary can change in a later version
 * while every stored payload stays readable; JSON text written before (a string) reads as is.
 *
 * Synchronous on purpose: the outbox's statements are built inside the writers' batches,
 * which a stream API (CompressionStream) could not join, and CompressionStream takes no
 * dictionary. `node:zlib` (the Workers runtime's native zlib, nodejs_compat) does both: about
 * 20 µs to pack and 15 µs to unpack a command's event where fflate in JavaScript took 65 and
 * 45 (bench/README.md, storage), the same RFC 1951 bytes either way, so payloads packed by the
 * earlier fflate code read unchanged. Pure: no I/O.
 *
 * Format 2, "packed against a base": the events one write makes share most of their text (a
 * command's event carries the task inline, and the task's `task.state_changed` is that same
 * task; a run of commands repeats it once per command). Such an event is packed with the
 * dictionary v1 followed by its base's JSON text, the base being another event of the same
 * write (services/events/outbox.ts chooses it and keeps the reference), so it stores only
 * what differs: about a tenth of a format 1 payload. zlib uses the last 32 KiB of a
 * dictionary (RFC 1951's window), the same on both sides, so any base size reads back.
 */
import { Buffer } from "node:buffer";
import { deflateRawSync, inflateRawSync } from "node:zlib";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The strings an event payload is made of, most frequent last (DEFLATE reaches back from the end). */
const DICTIONARY_V1 = encoder.encode(
  [
    '"form_response_events"',
    '"signer_name":null,',
    '"file_name":"","description":"","visible_to_worker":true,"visible_to_client":false,"source":"integration","mimetype":"image/jpeg","thumbnail":null,',
    '"reference":"","client":null,"metafields":{},"orderer":null,"tasks":[],"auto_assign":false,',
    '"order.created","order.updated","document.created","signature.created"',
    '"user":"https://","external_id":"","time":"2026-01-01T00:00:00.000Z","action":"update","assignee":null,"task_data":{},"notes":"","location":null,"state":"accepted","error_message":"","accepted_at":"2026-01-01T00:00:00.000Z","rejected_at":null,',
    '"complete","activate","transit","accept","assign","cancel","fail","completed","failed","cancelled","active","unassigned","draft","scheduled",',
    '{"id":"","url":"https:///tasks/","account":"https:///accounts/","state":"assigned","category":"drop_off","pick_up","service",',
    '"address":{"raw_address":"","formatted_address":"","location":{"type":"Point","coordinates":[24.,60.]},"geocoded_at":"2026-01-01T00:00:00.000Z","geocode_failed_at":null,"geocoding_provider":"offline"},',
    '"contact":{"name":"","company":"","emails":[],"phones":["+358"],"notes":""},',
    '"complete_after":"2026-01-01T00:00:00.000Z","complete_before":"2026-01-01T00:00:00.000Z","description":"","assignee":"https:///users/","order":null,"client":null,"position":null,"created_by":"https:///users/",',
    '"scheduled_time":null,"duration":null,"metafields":{},"route":null,"signers":[],"recurrence":null,"calendar_time":null,"form_default_values":{},"created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-01T00:00:00.000Z"}',
  ].join(""),
);

const V1 = 1;
const AGAINST_BASE = 2;

function dictionaryWith(baseText: string): Uint8Array {
  const base = encoder.encode(baseText);
  const dict = new Uint8Array(DICTIONARY_V1.length + base.length);
  dict.set(DICTIONARY_V1);
  dict.set(base, DICTIONARY_V1.length);
  return dict;
}

/**
 * JSON text, packed: `[1, ...deflate-raw(utf8, dictionary v1)]`; with `baseText` (the JSON text
 * of the payload it will be read with), `[2, ...deflate-raw(utf8, dictionary v1 + base)]`.
 */
export function packJsonText(text: string, baseText?: string): Uint8Array {
  const format = baseText === undefined ? V1 : AGAINST_BASE;
  const dictionary = baseText === undefined ? DICTIONARY_V1 : dictionaryWith(baseText);
  const deflated = deflateRawSync(encoder.encode(text), { level: 6, dictionary });
  const out = new Uint8Array(deflated.length + 1);
  out[0] = format;
  out.set(deflated, 1);
  return out;
}

export const packJson = (value: unknown) => packJsonText(JSON.stringify(value));

/**
 * `packJsonText` as hex, the form packed bytes cross the D1 binding in (SQL stores them with
 * `unhex(?)`): the binding sends a byte parameter as a JSON array of numbers, about four
 * characters a byte that both sides of the binding build and parse; hex is two, one string.
 */
export const packJsonHex = (text: string, baseText?: string) => {
  const bytes = packJsonText(text, baseText);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
};

/** Whether a stored payload was packed against a base (and so reads only with it). */
export const needsBase = (stored: unknown) => bytesOf(stored)?.[0] === AGAINST_BASE;

function bytesOf(stored: unknown): Uint8Array | null {
  return stored instanceof Uint8Array
    ? stored
    : stored instanceof ArrayBuffer
      ? new Uint8Array(stored)
      : Array.isArray(stored)
        ? Uint8Array.from(stored as number[])
        : null;
}

/**
 * The JSON text of a stored payload: packed bytes (as D1 answers a BLOB), or text stored
 * before. A format 2 payload needs its base: the base's stored payload, or its JSON text
 * already unpacked (`{ text }`, when a reader has it at hand).
 */
export function unpackJsonText(stored: unknown, base?: unknown): string {
  if (typeof stored === "string") return stored;
  const bytes = bytesOf(stored);
  if (bytes?.[0] === V1)
    return decoder.decode(inflateRawSync(bytes.subarray(1), { dictionary: DICTIONARY_V1 }));
  if (bytes?.[0] === AGAINST_BASE) {
    if (base === undefined || base === null) throw new Error("A packed JSON payload read without its base.");
    const baseText = isText(base) ? base.text : unpackJsonText(base);
    return decoder.decode(inflateRawSync(bytes.subarray(1), { dictionary: dictionaryWith(baseText) }));
  }
  throw new Error("Unknown packed JSON format.");
}

const isText = (v: unknown): v is { text: string } =>
  typeof v === "object" && v !== null && typeof (v as { text?: unknown }).text === "string";

export const unpackJson = <T = unknown>(stored: unknown, base?: unknown): T =>
  JSON.parse(unpackJsonText(stored, base)) as T;
