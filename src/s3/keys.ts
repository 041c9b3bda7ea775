/**
 * R2 object keys and the public URLs of stored objects.
 *
 * Layout (contract §8):
 *   fileupload/<file_upload_id>/<file_name>          what the signed form uploads
 *   documents/<id>/<file_name>                       a document's own copy
 *   signatures/<id>/<file_name>                      a signature's own copy
 *   documents/<id>/thumbnails/200.<png|jpg>          its thumbnail (same for signatures)
 *   exports/<id>/<token>/<kind>-<id>.<csv|jsonl>     an export's file (the token is the capability)
 *   outbox/<uuid>/<file_name>                        an attachment kept by the local e-mail provider
 *
 * A file name never contains "/" (see `fileNameProblem`), so `<kind>s/<id>/thumbnails/...`
 * cannot collide with `<kind>s/<id>/<file_name>`.
 *
 * Every object is served at `{base_url}/files/<key>`, each key segment percent-encoded. The
 * UUID inside the key is unguessable (122 random bits for v4, 74 for our v7 ids), and is the
 * only capability needed to read the object, as with an S3 `public-read` object.
 */
import { FILES_PREFIX } from "../http/urls";

export type AttachmentKind = "document" | "signature";

export const fileUploadKey = (id: string, fileName: string) => `fileupload/${id}/${fileName}`;
export const attachmentKey = (kind: AttachmentKind, id: string, fileName: string) =>
  `${kind}s/${id}/${fileName}`;
export const thumbnailKey = (kind: AttachmentKind, id: string, ext: "png" | "jpg") =>
  `${kind}s/${id}/thumbnails/200.${ext}`;
export const exportFileKey = (id: string, token: string, kind: string, format: string) =>
  `exports/${id}/${token}/${kind}-${id}.${format}`;
export const outboxAttachmentKey = (id: string, fileName: string) => `outbox/${id}/${fileName}`;

/**
 * The shapes of every key whose URL the service hands out (a `file`, `thumbnail` or `Location`),
 * as the OpenAPI path templates of `GET /files/...`: a path template cannot match a slash inside
 * one parameter (OpenAPI 3.1 §4.8.2), so each shape is its own path. test/openapi keeps this list
 * and the key helpers above in step.
 */
export const FILE_PATH_TEMPLATES = {
  fileupload: "fileupload/{id}/{file_name}",
  documents: "documents/{id}/{file_name}",
  documentThumbnails: "documents/{id}/thumbnails/{thumbnail_name}",
  signatures: "signatures/{id}/{file_name}",
  signatureThumbnails: "signatures/{id}/thumbnails/{thumbnail_name}",
  exports: "exports/{id}/{token}/{file_name}",
  outbox: "outbox/{id}/{file_name}",
} as const;

/**
 * Percent-encode each segment of a key (RFC 3986 §3.3: a segment's reserved characters,
 * spaces and non-ASCII must be encoded; "/" between segments stays a separator).
 */
export function encodeKey(key: string): string {
  return key.split("/").map(encodeURIComponent).join("/");
}

/** The URL a stored object is served at. */
export function fileUrl(baseUrl: string, key: string): string {
  return `${baseUrl}${FILES_PREFIX}/${encodeKey(key)}`;
}

/**
 * The key named by a `/files/...` path (the raw, still-encoded pathname), or null when the
 * path is not under `/files/` or its percent-encoding is malformed. Segments are decoded one
 * by one, so `%2F` inside a segment stays part of that segment's text.
 */
export function keyFromFilesPath(pathname: string): string | null {
  const prefix = `${FILES_PREFIX}/`;
  if (!pathname.startsWith(prefix)) return null;
  const rest = pathname.slice(prefix.length);
  if (rest === "") return null;
  try {
    return rest.split("/").map(decodeURIComponent).join("/");
  } catch {
    return null;
  }
}

/** Bytes of a key in UTF-8; S3 (and R2) keys are at most 1024 bytes. */
export const MAX_KEY_BYTES = 1024;
export const MAX_FILE_NAME_LENGTH = 255;

/**
 * Why a file name cannot be used, or null when it can. A file name is one path segment:
 * no "/" or "\" (it would change the key's structure, and S3 itself keeps only what follows
 * the last slash of a browser's file name), no control characters (they cannot travel in a
 * multipart header or a URL unharmed), and not "." or ".." (URL parsers remove such
 * segments, WHATWG URL "path state", so the `file` URL would not name the object).
 */
/**
 * `fileNameProblem`'s rules as one ECMA-262 pattern (for the OpenAPI document): not "." or "..",
 * no slash, backslash or control character.
 */
export const FILE_NAME_PATTERN =
  "^([^./\\\\\\x00-\\x1f\\x7f][^/\\\\\\x00-\\x1f\\x7f]*|\\.[^./\\\\\\x00-\\x1f\\x7f][^/\\\\\\x00-\\x1f\\x7f]*|\\.\\.[^/\\\\\\x00-\\x1f\\x7f]+)$";

export function fileNameProblem(name: string): string | null {
  if (name.length === 0) return "This field may not be blank.";
  if (name.length > MAX_FILE_NAME_LENGTH)
    return `Ensure this field has no more than ${MAX_FILE_NAME_LENGTH} characters.`;
  if (name === "." || name === "..") return "Enter a file name, not a path segment.";
  if (/[/\\]/.test(name)) return "A file name may not contain slashes.";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  if (/[\u0000-\u001f\u007f]/.test(name)) return "A file name may not contain control characters.";
  return null;
}

/** A document's or signature's file name: the upload's, spaces replaced by underscores (contract §8). */
export const attachmentFileName = (uploadName: string) => uploadName.replaceAll(" ", "_");
