/** What the multipart parser hands out, and its one error type. */
export type MultipartErrorKind = "not-multipart" | "malformed" | "fields-too-large";

export class MultipartError extends Error {
  readonly kind: MultipartErrorKind;
  /** For `fields-too-large`: the limit that was exceeded, in bytes. */
  readonly limit?: number;

  constructor(kind: MultipartErrorKind, message: string, limit?: number) {
    super(message);
    this.name = "MultipartError";
    this.kind = kind;
    this.limit = limit;
  }
}

export interface FormField {
  /** The name as sent (field names are matched case-insensitively by the Map key). */
  name: string;
  value: string;
}

export interface FormFile {
  /** The part's name as sent (`file`, in any case). */
  name: string;
  /** The `filename` parameter as sent, or null when the part has none. */
  filename: string | null;
  /** The part's own Content-Type header, or null when absent. */
  contentType: string | null;
  /**
   * Bytes of the body before the file's content. With the request's Content-Length this
   * gives the file's length when the file is followed only by the close delimiter, which
   * matters because R2's `put` refuses a stream of unknown length.
   */
  offset: number;
  /** The file's bytes, streamed from the request body as the consumer reads. */
  stream: ReadableStream<Uint8Array>;
}

export interface MultipartForm {
  /** The fields before the file part, keyed by lowercased name. */
  fields: Map<string, FormField>;
  file: FormFile | null;
}

export interface ParseMultipartOptions {
  /** Bound on the bytes before the file's content (preamble, fields, boundaries, headers). */
  maxFieldsBytes?: number;
}

export const DEFAULT_MAX_FIELDS_BYTES = 64 * 1024;

export function malformed(detail: string): MultipartError {
  return new MultipartError("malformed", `Malformed multipart/form-data body: ${detail}`);
}
