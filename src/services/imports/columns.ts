/**
 * Reading an import's rows (contract §21): the columns are the export's field names, so an
 * export re-imports. Each row becomes the body the API would take (a task, an order's
 * `tasks_data` entry, a contact address), and goes through the same zod schema and the same
 * service as that API call. Columns that are read-only in the API (`id`, `url`, `state`,
 * `created_at`, `address.formatted_address`, ...) are accepted and ignored, as DRF ignores
 * read-only fields in a body. An empty cell is "not sent".
 *
 * Cell text → value: numbers for `position` and the coordinates; JSON for lists and objects
 * (`contact.phones` also takes one plain number); a `metafields.<key>` cell by its definition's
 * type (`true`/`false`, numbers, a JSON list or one item for `multiselect`, text otherwise).
 */
import type { MetafieldValueType } from "../../domain/metafields";
import type { FieldErrors } from "../../http/errors";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../../lib/json-depth";
import { type ExportKind, fieldNames, type MetafieldKeys, unknownFields } from "../exports/fields";

export type ImportKind = "orders" | "tasks" | "contact_addresses";
export const IMPORT_KINDS: readonly ImportKind[] = ["orders", "tasks", "contact_addresses"];

/** Which export's columns an import of this kind reads. */
export const columnsKind = (kind: ImportKind): ExportKind => (kind === "contact_addresses" ? kind : "tasks");

/** Task columns an import applies (the others are read-only). */
const TASK_TEXT = [
  "category",
  "description",
  "complete_after",
  "complete_before",
  "scheduled_time",
  "duration",
  "assignee",
  "client",
  "route",
  "contact_address",
  "contact_address_external_id",
] as const;
const TASK_JSON = ["signers", "form_default_values"] as const;
const CONTACT_TEXT = ["name", "company", "notes"] as const;
const CONTACT_LIST = ["emails", "phones"] as const;

export type RowError = { row: number; field: string | null; message: string };

/** What the header must be: known columns, each once; an orders import needs order.external_id. */
export function headerProblems(kind: ImportKind, header: string[], keys: MetafieldKeys): string[] {
  const problems: string[] = [];
  const unknown = unknownFields(columnsKind(kind), header, keys);
  if (unknown.length) problems.push(`Unknown columns: ${unknown.map((u) => u || '""').join(", ")}.`);
  const dup = header.filter((h, i) => header.indexOf(h) !== i);
  if (dup.length) problems.push(`Columns listed more than once: ${[...new Set(dup)].join(", ")}.`);
  if (kind === "orders" && !header.includes("order.external_id")) {
    problems.push("An orders import needs the column order.external_id.");
  }
  return problems;
}

export const knownColumns = (kind: ImportKind) => fieldNames(columnsKind(kind));

type Cells = Record<string, string>;
type Types = ReadonlyMap<string, MetafieldValueType>;

/** A body being built from one row, with the cells that could not be read. */
export type RowBody = { body: Record<string, unknown>; errors: FieldErrors };

function put(target: Record<string, unknown>, path: string[], value: unknown) {
  let node = target;
  for (const k of path.slice(0, -1)) {
    node[k] ??= {};
    node = node[k] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value;
}

function json(out: RowBody, column: string, text: string): unknown {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    out.errors[column] = [`Value is nested deeper than ${MAX_JSON_DEPTH} levels.`];
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch {
    out.errors[column] = ["Value must be valid JSON."];
    return undefined;
  }
}

function number(out: RowBody, column: string, text: string): number | undefined {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n)) {
    out.errors[column] = ["A valid number is required."];
    return undefined;
  }
  return n;
}

/** A metafield cell as the value its definition expects (the service then checks it). */
export function metafieldValue(text: string, type: MetafieldValueType | undefined): unknown {
  switch (type) {
    case "number":
    case "integer": {
      const n = Number(text);
      return text.trim() !== "" && Number.isFinite(n) ? n : text;
    }
    case "boolean":
      return text === "true" ? true : text === "false" ? false : text;
    case "multiselect":
      // Left as text (then refused by type) when nested past what any body may be.
      if (text.startsWith("[") && !nestsDeeperThan(text, MAX_JSON_DEPTH)) {
        try {
          return JSON.parse(text);
        } catch {
          return text;
        }
      }
      return [text];
    default:
      return text;
  }
}

/** Address and contact columns (tasks and contact addresses share them). */
function readShared(out: RowBody, c: Cells) {
  const b = out.body;
  if (c.address !== undefined) {
    const a = json(out, "address", c.address) as Record<string, unknown> | undefined;
    if (a && typeof a === "object") b.address = { raw_address: a.raw_address, location: a.location };
  }
  if (c["address.raw_address"] !== undefined) put(b, ["address", "raw_address"], c["address.raw_address"]);
  if (c["address.location"] !== undefined) {
    const loc = json(out, "address.location", c["address.location"]);
    if (loc !== undefined) put(b, ["address", "location"], loc);
  }
  const lat = c["address.latitude"];
  const lon = c["address.longitude"];
  if (lat !== undefined || lon !== undefined) {
    if (lat === undefined || lon === undefined) {
      out.errors[lat === undefined ? "address.latitude" : "address.longitude"] = [
        "address.latitude and address.longitude go together.",
      ];
    } else {
      const y = number(out, "address.latitude", lat);
      const x = number(out, "address.longitude", lon);
      if (x !== undefined && y !== undefined)
        put(b, ["address", "location"], { type: "Point", coordinates: [x, y] });
    }
  }
  if (c.contact !== undefined) {
    const v = json(out, "contact", c.contact);
    if (v !== undefined) b.contact = v;
  }
  for (const k of CONTACT_TEXT)
    if (c[`contact.${k}`] !== undefined) put(b, ["contact", k], c[`contact.${k}`]);
  for (const k of CONTACT_LIST) {
    const text = c[`contact.${k}`];
    if (text === undefined) continue;
    put(b, ["contact", k], text.startsWith("[") ? json(out, `contact.${k}`, text) : [text]);
  }
}

function readMetafields(
  out: RowBody,
  c: Cells,
  prefix: string,
  types: Types,
  target: Record<string, unknown>,
) {
  if (c[prefix.slice(0, -1)] !== undefined) {
    const v = json(out, prefix.slice(0, -1), c[prefix.slice(0, -1)]);
    if (v !== undefined) target.metafields = v;
  }
  for (const [column, text] of Object.entries(c)) {
    if (!column.startsWith(prefix) || column.length === prefix.length) continue;
    const key = column.slice(prefix.length);
    if (key.includes(".")) continue;
    put(target, ["metafields", key], metafieldValue(text, types.get(key)));
  }
}

/** The non-empty cells of a row by column (a short row is padded, a long one reported). */
export function cellsOf(header: string[], cells: string[]): { cells: Cells; problem?: string } {
  const out: Cells = {};
  header.forEach((h, i) => {
    const v = cells[i];
    if (v !== undefined && v !== "") out[h] = v;
  });
  if (cells.length > header.length) {
    return { cells: out, problem: `The row has ${cells.length} fields; the header has ${header.length}.` };
  }
  return { cells: out };
}

/**
 * A task body (an order's `tasks_data` entry when `forOrder`). `assignee.email` names a user of
 * the account by e-mail (resolved by the caller through `emails`).
 */
export function taskBody(
  c: Cells,
  ctx: { taskTypes: Types; emails: ReadonlyMap<string, string>; forOrder: boolean },
): RowBody {
  const out: RowBody = { body: {}, errors: {} };
  const b = out.body;
  for (const k of TASK_TEXT) if (c[k] !== undefined) b[k] = c[k];
  if (!ctx.forOrder && c.order !== undefined) b.order = c.order;
  for (const k of TASK_JSON) {
    if (c[k] === undefined) continue;
    const v = json(out, k, c[k]);
    if (v !== undefined) b[k] = v;
  }
  if (c.position !== undefined) b.position = number(out, "position", c.position);
  const email = c["assignee.email"];
  if (email !== undefined && b.assignee === undefined) {
    const id = ctx.emails.get(email.trim().toLowerCase());
    if (id) b.assignee = id;
    else out.errors["assignee.email"] = ["No user of this account has this e-mail."];
  }
  readShared(out, c);
  readMetafields(out, c, "metafields.", ctx.taskTypes, b);
  return out;
}

/** The order's own fields, read from the first row of its group. */
export function orderBody(c: Cells, orderTypes: Types): RowBody {
  const out: RowBody = { body: {}, errors: {} };
  const b = out.body;
  b.external_id = c["order.external_id"];
  if (c["order.reference"] !== undefined) b.reference = c["order.reference"];
  if (c["order.description"] !== undefined) b.description = c["order.description"];
  readMetafields(out, c, "order.metafields.", orderTypes, b);
  return out;
}

export function contactAddressBody(c: Cells, types: Types): RowBody {
  const out: RowBody = { body: {}, errors: {} };
  if (c.external_id !== undefined) out.body.external_id = c.external_id;
  readShared(out, c);
  readMetafields(out, c, "metafields.", types, out.body);
  return out;
}

/**
 * DRF field errors as `{field, message}` pairs, the field named as a column where the path is
 * one (`address.raw_address`, `metafields.size`), else by its dotted path; `non_field_errors`
 * name no field. `prefix` puts an order's own fields under `order.`.
 */
export function flattenErrors(
  e: FieldErrors | FieldErrors[] | string[],
  prefix = "",
): { field: string | null; message: string }[] {
  const out: { field: string | null; message: string }[] = [];
  const walk = (node: unknown, path: string[]) => {
    if (Array.isArray(node)) {
      if (node.every((x) => typeof x === "string")) {
        for (const m of node as string[])
          out.push({ field: path.length ? prefix + columnOf(path) : null, message: m });
      } else {
        for (const [i, x] of node.entries()) walk(x, [...path, String(i)]);
      }
      return;
    }
    if (node && typeof node === "object") {
      for (const [k, v] of Object.entries(node)) walk(v, k === "non_field_errors" ? path : [...path, k]);
    }
  };
  walk(e, []);
  return out;
}

/** `contact.phones.0` → `contact.phones`: list indexes are not columns. */
const columnOf = (path: string[]) => {
  const parts = [...path];
  while (parts.length > 1 && /^\d+$/.test(parts[parts.length - 1])) parts.pop();
  return parts.join(".");
};
