/**
 * The streaming multipart/form-data parser of the storage endpoint, split by step: `parse`
 * (the parser, its comment says how it streams), `headers` (parameters, boundary), `bytes`
 * (delimiter search), `limits` (byte counting), `types`.
 */

export { parseBoundary, parseHeaderValue } from "./headers";
export { type ByteCounter, ByteLimitError, byteLimiter } from "./limits";
export { parseMultipartForm } from "./parse";
export {
  DEFAULT_MAX_FIELDS_BYTES,
  type FormField,
  type FormFile,
  MultipartError,
  type MultipartErrorKind,
  type MultipartForm,
  type ParseMultipartOptions,
} from "./types";
