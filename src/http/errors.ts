import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";

/**
 * Every `code` the API answers in an error body `{detail, code}`. `ApiError` takes only these,
 * so the OpenAPI document's `Error.code` enum (http/openapi.ts) is this list and cannot miss
 * one.
 */
export const ERROR_CODES = [
  "bad_request",
  "parse_error",
  "not_acceptable_version",
  "invalid_timezone",
  "not_authenticated",
  "authentication_failed",
  "permission_denied",
  "not_found",
  "method_not_allowed",
  "conflict",
  "off_duty",
  "request_too_large",
  "unsupported_media_type",
  "throttled",
  "upgrade_required",
  "server_error",
  "service_unavailable",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * The one error type of the API. Every failure is rendered by `renderError` in the
 * contract's shapes (DRF's): `{detail, code}` for HTTP errors, field maps for validation.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

/** A DRF validation body: `{field: [msg]}`, nested objects, `non_field_errors`. */
export type FieldErrors = { [field: string]: string[] | FieldErrors | FieldErrors[] };

/** 400 with a DRF-shaped body; for array requests, an array aligned with the input. */
export class ValidationError extends Error {
  readonly status = 400;
  constructor(readonly body: FieldErrors | FieldErrors[]) {
    super("validation error");
  }
}

export const fieldError = (field: string, message: string) => new ValidationError({ [field]: [message] });
export const nonFieldError = (message: string) => new ValidationError({ non_field_errors: [message] });

export const notFound = (detail = "Not found.") => new ApiError(404, "not_found", detail);
export const permissionDenied = (detail = "You do not have permission to perform this action.") =>
  new ApiError(403, "permission_denied", detail);
export const notAuthenticated = (detail = "Authentication credentials were not provided.") =>
  new ApiError(401, "not_authenticated", detail, { "WWW-Authenticate": 'Bearer realm="api"' });
export const authenticationFailed = (detail = "Invalid token.") =>
  new ApiError(401, "authentication_failed", detail, {
    "WWW-Authenticate": 'Bearer realm="api", error="invalid_token"',
  });
export const badRequest = (detail: string, code: ErrorCode = "bad_request") =>
  new ApiError(400, code, detail);

/** 503 with `Retry-After` in seconds (RFC 9110 §15.6.4, §10.2.3): try again then. */
export const serviceUnavailable = (detail: string, retryAfterSeconds: number) =>
  new ApiError(503, "service_unavailable", detail, {
    "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))),
  });

/** DRF's codes for the statuses Hono raises itself (DRF: ParseError is `parse_error`). */
const HTTP_EXCEPTION_CODES: Record<number, ErrorCode> = {
  400: "parse_error",
  401: "not_authenticated",
  403: "permission_denied",
  404: "not_found",
  405: "method_not_allowed",
  413: "request_too_large",
  415: "unsupported_media_type",
  429: "throttled",
};

/** Maps anything thrown to the wire shape; internals go to the log, never onto the wire. */
/**
 * `c` needs only the request id (set first in the chain), so this module depends on nothing
 * else of the HTTP layer: every other module can throw its errors without an import circle.
 */
export function renderError<E extends { Variables: { requestId: string } }>(
  err: unknown,
  c: Context<E>,
): Response {
  if (err instanceof ValidationError) return c.json(err.body, 400);
  if (err instanceof ApiError) {
    for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
    return c.json({ detail: err.detail, code: err.code }, err.status as 400);
  }
  if (err instanceof HTTPException) {
    // Hono's own errors (its JSON validator's "Malformed JSON", the body limit) get DRF's codes.
    const status = err.status;
    const code: ErrorCode = HTTP_EXCEPTION_CODES[status] ?? (status >= 500 ? "server_error" : "bad_request");
    return c.json({ detail: err.message || "Request failed.", code }, status);
  }
  const requestId = c.get("requestId");
  console.error(
    JSON.stringify({
      level: "error",
      request_id: requestId,
      error: String(err),
      stack: (err as Error)?.stack,
    }),
  );
  return c.json(
    {
      detail: `A server error occurred. Request id: ${requestId}.`,
      code: "server_error",
      request_id: requestId,
    },
    500,
  );
}
