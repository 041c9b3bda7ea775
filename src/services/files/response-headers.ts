/**
 * `s3_response_headers` (write-only, contract §8): headers a stored document is served with.
 *
 * The accepted names are the ones S3 lets a GET override ("GetObject: Overriding response
 * header values": response-content-type, -content-language, -expires, -cache-control,
 * -content-disposition, -content-encoding), and exactly the HTTP metadata an R2 object keeps
 * (`R2HTTPMetadata`). They are written on the document's R2 object when it is created, so the
 * file is served with them by `/files/` without a database read. Names are matched
 * case-insensitively, with or without S3's `response-` prefix.
 */
import type { FieldErrors } from "../../http/errors";

export const RESPONSE_HEADER_NAMES = [
  "Content-Type",
  "Content-Language",
  "Expires",
  "Cache-Control",
  "Content-Disposition",
  "Content-Encoding",
] as const;
export type ResponseHeaderName = (typeof RESPONSE_HEADER_NAMES)[number];
export type ResponseHeaders = Partial<Record<ResponseHeaderName, string>>;

const BY_LOWER = new Map<string, ResponseHeaderName>(RESPONSE_HEADER_NAMES.map((n) => [n.toLowerCase(), n]));
const MAX_VALUE_LENGTH = 1024;

/** Canonical headers, or field errors keyed by the names as sent. */
export function readResponseHeaders(input: Record<string, unknown> | undefined | null): {
  headers: ResponseHeaders;
  errors: FieldErrors | null;
} {
  const headers: ResponseHeaders = {};
  const errors: FieldErrors = {};
  for (const [name, value] of Object.entries(input ?? {})) {
    const lower = name.toLowerCase();
    const canonical = BY_LOWER.get(lower.startsWith("response-") ? lower.slice("response-".length) : lower);
    if (!canonical) {
      errors[name] = [`Unsupported header. Allowed: ${RESPONSE_HEADER_NAMES.join(", ")}.`];
      continue;
    }
    if (typeof value !== "string") {
      errors[name] = ["Not a valid string."];
      continue;
    }
    // RFC 9110 §5.5: field values have no CR, LF or NUL; an R2 metadata value is a header value.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value) || value.length > MAX_VALUE_LENGTH) {
      errors[name] = [
        `Enter a header value without control characters, at most ${MAX_VALUE_LENGTH} characters.`,
      ];
      continue;
    }
    if (canonical === "Expires" && Number.isNaN(Date.parse(value))) {
      errors[name] = ['Enter an HTTP-date such as "Wed, 21 Oct 2026 07:28:00 GMT".'];
      continue;
    }
    headers[canonical] = value.trim();
  }
  return { headers, errors: Object.keys(errors).length ? errors : null };
}

/** The R2 HTTP metadata of a document: the detected type unless a Content-Type is given. */
export function httpMetadataFor(headers: ResponseHeaders, mimetype: string): R2HTTPMetadata {
  return {
    contentType: headers["Content-Type"] ?? mimetype,
    contentLanguage: headers["Content-Language"],
    contentDisposition: headers["Content-Disposition"],
    contentEncoding: headers["Content-Encoding"],
    cacheControl: headers["Cache-Control"],
    cacheExpiry: headers.Expires ? new Date(headers.Expires) : undefined,
  };
}
