import { isUuid } from "../lib/ids";

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
 * Reads the id out of a hyperlink to `collection`. The host is not compared (a client may
 * reach the API through another name), the path must be exactly `/<collection>/<uuid>/`.
 * A bare UUID is accepted too, for clients that hold ids. Returns null when it is neither.
 */
export function parseHyperlink(value: unknown, collection: Collection): string | null {
  if (typeof value !== "string") return null;
  const v = value.trim();
  if (isUuid(v)) return v.toLowerCase();
  let path: string;
  try {
    path = new URL(v).pathname;
  } catch {
    return null;
  }
  const m = /^(?:.*)\/([a-z_]+)\/([0-9a-fA-F-]{36})\/?$/.exec(path);
  if (!m || m[1] !== collection || !isUuid(m[2])) return null;
  return m[2].toLowerCase();
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
