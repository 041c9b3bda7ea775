/**
 * S3-style errors for the storage endpoint (`{upload_url}`), which answers the way S3's
 * POST Object does (contract §8).
 *
 * Wire shape (S3 API reference, "Error responses"):
 *
 *   <?xml version="1.0" encoding="UTF-8"?>
 *   <Error><Code>AccessDenied</Code><Message>...</Message>...<RequestId>...</RequestId></Error>
 *
 * S3 adds operation-specific elements between Message and RequestId (ArgumentName,
 * ProposedSize, StringToSign, ...); they are carried in `S3Error.details`, in order.
 */

import { ByteLimitError, MultipartError } from "./multipart";

export type S3ErrorDetails = Record<string, string | number>;

export class S3Error extends Error {
  readonly status: number;
  readonly code: string;
  /** Extra child elements of <Error>, emitted in insertion order after <Message>. */
  readonly details: S3ErrorDetails;

  constructor(status: number, code: string, message: string, details: S3ErrorDetails = {}) {
    super(message);
    this.name = "S3Error";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

// XML 1.0 (§2.2 Char) forbids C0 controls other than TAB, LF and CR even as character
// references, so those are replaced; CR and LF are written as references so that they
// survive attribute/end-of-line normalization when the document is parsed back.
function isXmlInvalid(code: number): boolean {
  return (
    (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || code === 0xfffe || code === 0xffff
  );
}
const XML_SPECIAL = /[&<>"'\r\n]/g;
const XML_ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
  "\r": "&#13;",
  "\n": "&#10;",
};

/** Escape text for an XML element body. */
export function xmlEscape(value: string | number): string {
  let text = String(value);
  let clean = "";
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (isXmlInvalid(text.charCodeAt(i))) {
      clean += `${text.slice(start, i)}\uFFFD`;
      start = i + 1;
    }
  }
  if (start > 0) text = clean + text.slice(start);
  return text.replace(XML_SPECIAL, (c) => XML_ENTITIES[c]);
}

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

function element(name: string, value: string | number): string {
  return `<${name}>${xmlEscape(value)}</${name}>`;
}

/** The XML body of an S3 error. `resource` (e.g. the key or bucket path) is optional, as on S3. */
export function s3ErrorXml(err: S3Error, requestId: string, resource?: string): string {
  let body = element("Code", err.code) + element("Message", err.message);
  for (const [name, value] of Object.entries(err.details)) body += element(name, value);
  if (resource !== undefined) body += element("Resource", resource);
  body += element("RequestId", requestId);
  return `${XML_DECLARATION}<Error>${body}</Error>`;
}

/** A ready Response for an S3 error (`application/xml`, as S3 answers). */
export function s3ErrorResponse(err: S3Error, requestId: string, resource?: string): Response {
  return new Response(s3ErrorXml(err, requestId, resource), {
    status: err.status,
    headers: { "Content-Type": "application/xml", "x-amz-request-id": requestId },
  });
}

/**
 * The body S3 answers to a POST Object with `success_action_status=201` (RESTObjectPOST,
 * "Response Elements": Location, Bucket, Key, ETag under <PostResponse>). Captures of real S3
 * answers show no namespace, `Key` raw, `Location` with the key percent-encoded, and a quoted
 * ETag; the ETag is quoted here if the caller passes R2's unquoted `etag`.
 */
export function postResponseXml(r: { location: string; bucket: string; key: string; etag: string }): string {
  const etag = r.etag.startsWith('"') ? r.etag : `"${r.etag}"`;
  return (
    `${XML_DECLARATION}\n<PostResponse>` +
    element("Location", r.location) +
    element("Bucket", r.bucket) +
    element("Key", r.key) +
    element("ETag", etag) +
    "</PostResponse>"
  );
}

// ---------------------------------------------------------------------------------------
// The errors the POST endpoint answers. Codes and messages follow S3's wire answers where
// they are known (S3 "Error responses" table, and S3's answers recorded by client test
// suites); the message texts are S3's own, typos included, so clients matching on them work.
// ---------------------------------------------------------------------------------------

/** 403 AccessDenied. Also S3's answer for an anonymous POST to a bucket that is not public. */
export function accessDenied(message = "Access Denied"): S3Error {
  return new S3Error(403, "AccessDenied", message);
}

/** 400 InvalidArgument naming the offending form field. */
export function invalidArgument(message: string, argumentName: string, argumentValue = ""): S3Error {
  return new S3Error(400, "InvalidArgument", message, {
    ArgumentName: argumentName,
    ArgumentValue: argumentValue,
  });
}

/** A required form field is absent (S3 also gives this when the field comes after `file`). */
export function missingField(canonicalName: string): S3Error {
  return invalidArgument(
    `Bucket POST must contain a field named '${canonicalName}'.  If it is specified, please check the order of the fields.`,
    canonicalName,
  );
}

/** No `file` part (S3: InvalidArgument, not the table's IncorrectNumberOfFilesInPostRequest). */
export function noFile(): S3Error {
  return invalidArgument("POST requires exactly one file upload per request.", "file", "0");
}

export function invalidPolicyDocument(detail: string): S3Error {
  return new S3Error(400, "InvalidPolicyDocument", `Invalid Policy: ${detail}`);
}

export function policyConditionFailed(condition: string): S3Error {
  return accessDenied(`Invalid according to Policy: Policy Condition failed: ${condition}`);
}

export function entityTooLarge(proposedSize: number, maxSizeAllowed: number): S3Error {
  return new S3Error(400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size", {
    ProposedSize: proposedSize,
    MaxSizeAllowed: maxSizeAllowed,
  });
}

export function entityTooSmall(proposedSize: number, minSizeAllowed: number): S3Error {
  return new S3Error(400, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size", {
    ProposedSize: proposedSize,
    MinSizeAllowed: minSizeAllowed,
  });
}

export function malformedPostRequest(): S3Error {
  return new S3Error(
    400,
    "MalformedPOSTRequest",
    "The body of your POST request is not well-formed multipart/form-data.",
  );
}

/** Fields before the file part too large (S3's code and message, "preceeding" sic). */
export function maxPostPreDataLengthExceeded(limit: number): S3Error {
  return new S3Error(
    400,
    "MaxPostPreDataLengthExceeded",
    "Your POST request fields preceeding the upload file was too large.",
    { MaxPostPreDataLengthBytes: limit },
  );
}

/** A POST that is not multipart/form-data (S3 answers 412 PreconditionFailed). */
export function notMultipart(): S3Error {
  return new S3Error(
    412,
    "PreconditionFailed",
    "At least one of the pre-conditions you specified did not hold",
    {
      Condition: "Bucket POST must be of the enclosure-type multipart/form-data",
    },
  );
}

/**
 * Map what the POST pipeline can throw to an S3Error: S3Errors pass through, the multipart
 * parser's and the byte limiter's typed errors get S3's codes, anything else is a 500.
 */
export function toS3Error(err: unknown): S3Error {
  if (err instanceof S3Error) return err;
  if (err instanceof MultipartError) {
    if (err.kind === "not-multipart") return notMultipart();
    if (err.kind === "fields-too-large") return maxPostPreDataLengthExceeded(err.limit ?? 0);
    return malformedPostRequest();
  }
  if (err instanceof ByteLimitError) {
    return err.kind === "too-large"
      ? entityTooLarge(err.size, err.limit)
      : entityTooSmall(err.size, err.limit);
  }
  return new S3Error(500, "InternalError", "We encountered an internal error. Please try again.");
}
