import { z } from "@hono/zod-openapi";
import { IN_FILTER_MAX } from "../domain/list-filters";

/**
 * The one place where resource URLs are built and parsed back, as DRF's hyperlinked
 * relations do: `{base_url}/<collection>/<uuid>/`. Collections are named here so a typo
 * cannot produce a link that `parseHyperlink` would not read back.
 */
export const COLLECTIONS = [
  "accounts",
  "users",
  "account_roles",
  "session_tokens",
  "tasks",
  "orders",
  "task_commands",
  "contact_addresses",
  "file_uploads",
  "documents",
  "signatures",
  "webhooks",
  "events",
  "routes",
  "route_optimizations",
  "trackers",
  "sms",
  "notification_templates",
  "clients",
  "recurrences",
  "forms",
  "metafields",
  "form_fields",
  "form_responses",
  "task_imports",
  "imports",
  "task_exports",
  "contact_address_exports",
] as const;
export type Collection = (typeof COLLECTIONS)[number];

export function reverse(baseUrl: string, collection: Collection, id: string): string;
export function reverse(
  baseUrl: string,
  collection: Collection,
  id: string | null | undefined,
): string | null;
export function reverse(
  baseUrl: string,
  collection: Collection,
  id: string | null | undefined,
): string | null {
  return id ? `${baseUrl}/${collection}/${id}/` : null;
}

export const collectionUrl = (baseUrl: string, collection: Collection) => `${baseUrl}/${collection}/`;

/**
 * What ECMAScript's `String.prototype.trim` removes (ECMA-262 WhiteSpace and LineTerminator),
 * spelled out: a hyperlink is read with the spaces around it, as before. Not `\s`, which means
 * another set in other regex dialects (Python's also takes U+001C–U+001F), so a tool that reads
 * the document's `pattern` in one of those generates what the service takes.
 */
const SPACES = "[\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]*";
/** RFC 9562's text form of a UUID, in either letter case (`[0-9]`: `\d` is Unicode's digits in some dialects). */
const UUID = "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}";
/**
 * An http(s) URL (RFC 3986, ASCII; the scheme in either case, §3.1) whose path ends with
 * `/<collection>/<uuid>` and an optional slash: any authority (the host is not compared, a
 * client may reach the API through another name), any path before it (an API behind a path
 * prefix), any query and fragment. Character classes of printable ASCII without the delimiters
 * that end each part (`/`, `?`, `#`).
 */
const linkUrl = (collection: Collection) =>
  `[Hh][Tt][Tt][Pp][Ss]?://[!"$-.0->@-~]+(?:/[!"$->@-~]*)?/${collection}/(${UUID})/?(?:\\?[!"$-~]*)?(?:#[!-~]*)?`;

/**
 * The syntax of a hyperlink to `collection` as the service reads it (`parseHyperlink`): a URL of
 * the collection, or a bare UUID for clients that hold ids, with spaces around it. As a JSON
 * Schema 2020-12 `pattern` (ECMA-262; it also reads the same in Python's `re`), so the document
 * states it and a generated request is one the service takes (issue 56). `blank`: the empty
 * string too, where the field takes `""` for null (DRF's related fields do).
 */
export function hyperlinkPattern(collection: Collection, opts: { blank?: boolean } = {}): string {
  const link = `${SPACES}(?:(${UUID})|${linkUrl(collection)})${SPACES}`;
  return opts.blank ? `^(?:${link})?$` : `^${link}$`;
}

const linkRegExps = new Map<Collection, RegExp>();

/**
 * Reads the id out of a hyperlink to `collection` (`hyperlinkPattern`), or returns null when the
 * value is none. Only the syntax: whether the object exists is the caller's question.
 */
export function parseHyperlink(value: unknown, collection: Collection): string | null {
  if (typeof value !== "string") return null;
  let re = linkRegExps.get(collection);
  if (!re) {
    re = new RegExp(hyperlinkPattern(collection), "u");
    linkRegExps.set(collection, re);
  }
  const m = re.exec(value);
  return m ? (m[1] ?? m[2]).toLowerCase() : null;
}

/**
 * The schema of a hyperlink input (a body member, an array's item, an id filter): a string with
 * the syntax's `pattern`. The service checks it (`parseHyperlink`, DRF's "Invalid hyperlink - No
 * URL match.", beside the other fields' errors and aligned in batches), so zod takes any string;
 * "Object does not exist." is the one answer no schema can give.
 */
export const hyperlinkSchema = (
  collection: Collection,
  description: string,
  opts: { blank?: boolean } = {},
) => z.string().openapi({ description, pattern: hyperlinkPattern(collection, opts) });

/**
 * An `<field>__in` list filter (django-filter's `BaseInFilter`: values separated by commas):
 * hyperlinks to `collection`, URLs or ids, 1 to `IN_FILTER_MAX` of them. A page reads what
 * belongs to many objects in one request instead of one per object. An item is a hyperlink as
 * `hyperlinkPattern` has it, less the commas its URL form allows elsewhere (RFC 3986 lets one
 * stand in a host, path or query), so the commas split the list the one way the pattern does.
 */
export function hyperlinkListPattern(collection: Collection): string {
  const item = hyperlinkPattern(collection)
    .slice(1, -1)
    .replaceAll("$-.", "$-+\\-.")
    .replaceAll("$->", "$-+\\-->")
    .replaceAll("$-~", "$-+\\--~")
    .replaceAll("[!-~]", "[!-+\\--~]");
  return `^${item}(?:,${item}){0,${IN_FILTER_MAX - 1}}$`;
}

export const hyperlinkListSchema = (collection: Collection, description: string) =>
  z.string().openapi({
    description: `${description} Comma-separated, at most ${IN_FILTER_MAX}; each a \`/${collection}/\` URL or an id.`,
    pattern: hyperlinkListPattern(collection),
    example: "0197a0e2-53b1-7000-8000-000000000001,0197a0e2-53b1-7000-8000-000000000002",
  });

/**
 * The ids of an `__in` filter's value (`hyperlinkListPattern`), or the field error to answer (400).
 * Split at every comma: a part that is not a hyperlink (an empty one too) refuses the whole filter.
 */
export function parseHyperlinkList(
  value: string,
  collection: Collection,
): { ids: string[] } | { error: string } {
  const items = value.split(",");
  if (items.length > IN_FILTER_MAX)
    return { error: `Ensure this list has at most ${IN_FILTER_MAX} items (it has ${items.length}).` };
  const ids = items.map((v) => parseHyperlink(v, collection));
  if (ids.some((id) => !id)) return { error: "Invalid hyperlink - No URL match." };
  return { ids: [...new Set(ids as string[])] };
}

/** Paths served outside the versioned JSON API (no trailing-slash rule, no JSON envelope). */
export const STORAGE_PREFIX = "/storage";
export const FILES_PREFIX = "/files";
export const DOCS_PREFIX = "/docs";
export const OPENAPI_PATH = "/openapi.json";
/** The dispatch console (contract §26): static files of the web/ workspace, served like /docs/. */
export const CONSOLE_PREFIX = "/console";
/** The field app (contract §27): static files of the web/ workspace, served like the console. */
export const FIELD_APP_PREFIX = "/app";
/** The recipients' public pages (src/public): `/t/<token>/`. */
export const PUBLIC_PREFIX = "/t";

/** The storage sub-app's paths: S3's POST Object endpoint and the stored files. */
export const isStoragePath = (path: string) =>
  path === STORAGE_PREFIX || path.startsWith(`${STORAGE_PREFIX}/`) || path.startsWith(`${FILES_PREFIX}/`);

/** The docs sub-app's paths: the OpenAPI document, the page that renders it, and the apps' files. */
export const isDocsPath = (path: string) =>
  path === OPENAPI_PATH ||
  [DOCS_PREFIX, CONSOLE_PREFIX, FIELD_APP_PREFIX].some(
    (prefix) => path === prefix || path.startsWith(`${prefix}/`),
  );
