/**
 * Serving stored objects from R2 at `{base_url}/files/<key>`, as S3 serves a public-read
 * object: Content-Type and the other stored HTTP metadata, ETag, Last-Modified, byte ranges
 * (RFC 7233) and conditional requests (RFC 7232), GET and HEAD.
 *
 * Where S3 and the RFCs leave a choice, the RFC's simplest conforming answer is taken:
 * - one byte range is served as 206; a request for several ranges is answered with the whole
 *   object (200), which RFC 7233 §3.1 allows ("A server MAY ignore the Range header field"),
 *   and which is what S3 does too (it has no multipart/byteranges);
 * - a Range on an empty object is ignored (RFC 9110 §14.1.1: a range of a zero-length
 *   representation is never satisfiable, and ignoring it beats a 416 that no client can fix);
 * - errors are S3's XML errors (NoSuchKey, InvalidRange, PreconditionFailed).
 */
import { S3Error, s3ErrorResponse } from "./s3-errors";

// ------------------------------------------------------------------------------------------
// Ranges (RFC 7233 §2.1, §3.1, §4.4)
// ------------------------------------------------------------------------------------------

export type RangeDecision =
  | { kind: "none" }
  | { kind: "range"; offset: number; length: number }
  | { kind: "unsatisfiable" };

/**
 * The byte range a `Range` header asks for in an object of `size` bytes.
 *
 *   byte-ranges-specifier = "bytes=" 1#( first-byte-pos "-" [ last-byte-pos ] / "-" suffix-length )
 *
 * A header that is not of that form (another unit, junk) is ignored ("none", §3.1: "An origin
 * server MUST ignore a Range header field that contains a range unit it does not
 * understand"); a last-byte-pos before first-byte-pos makes the header invalid (§2.1), so it
 * is ignored too. A first-byte-pos at or past the end, or a zero suffix, is unsatisfiable
 * (§4.4: 416). A last-byte-pos past the end is clipped (§2.1).
 */
export function parseRange(header: string | null | undefined, size: number): RangeDecision {
  if (!header) return { kind: "none" };
  const m = /^\s*bytes\s*=\s*(.*)$/i.exec(header);
  if (!m) return { kind: "none" };
  const specs = m[1]
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (specs.length !== 1) return { kind: "none" }; // none, or several ranges: whole object
  if (size === 0) return { kind: "none" };
  const spec = /^(\d*)\s*-\s*(\d*)$/.exec(specs[0]);
  if (!spec || (spec[1] === "" && spec[2] === "")) return { kind: "none" };
  if (spec[1] === "") {
    const suffix = Number(spec[2]);
    if (suffix === 0) return { kind: "unsatisfiable" };
    const length = Math.min(suffix, size);
    return { kind: "range", offset: size - length, length };
  }
  const first = Number(spec[1]);
  const last = spec[2] === "" ? Number.POSITIVE_INFINITY : Number(spec[2]);
  if (last < first) return { kind: "none" };
  if (first >= size) return { kind: "unsatisfiable" };
  const end = Math.min(last, size - 1);
  return { kind: "range", offset: first, length: end - first + 1 };
}

// ------------------------------------------------------------------------------------------
// Conditional requests (RFC 7232)
// ------------------------------------------------------------------------------------------

/** `"abc"` or `W/"abc"` → { weak, tag: "abc" }; null when not an entity-tag. */
function parseEntityTag(s: string): { weak: boolean; opaque: string } | null {
  const m = /^(W\/)?("[^"]*")$/.exec(s.trim());
  return m ? { weak: !!m[1], opaque: m[2] } : null;
}

/** Entity-tags of an If-Match / If-None-Match list; "*" is returned as "*". */
function entityTagList(header: string): string[] | "*" {
  if (header.trim() === "*") return "*";
  // Tags are quoted and may contain commas, so they are matched rather than split on ",".
  return header.match(/(W\/)?"[^"]*"/g) ?? [];
}

/** RFC 7232 §2.3.2: strong comparison needs both tags strong and equal. */
function strongMatch(a: string, b: string): boolean {
  const x = parseEntityTag(a);
  const y = parseEntityTag(b);
  return !!x && !!y && !x.weak && !y.weak && x.opaque === y.opaque;
}

/** RFC 7232 §2.3.2: weak comparison ignores the W/ prefix. */
function weakMatch(a: string, b: string): boolean {
  const x = parseEntityTag(a);
  const y = parseEntityTag(b);
  return !!x && !!y && x.opaque === y.opaque;
}

/** An HTTP-date (RFC 7231 §7.1.1.1) as epoch ms; null when invalid (then the header is ignored). */
function httpDate(value: string | null): number | null {
  if (!value) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : t;
}

/** HTTP dates have one-second resolution: Last-Modified is compared at that resolution. */
const toSecond = (ms: number) => Math.floor(ms / 1000) * 1000;

export type Precondition = "proceed" | "not-modified" | "failed";

/**
 * RFC 7232 §6, in its order: If-Match, else If-Unmodified-Since (412 when false);
 * If-None-Match, else If-Modified-Since for GET/HEAD (304 when false; If-None-Match on
 * other methods: 412).
 */
export function evaluatePreconditions(
  headers: Headers,
  method: string,
  v: { etag: string; lastModified: number },
): Precondition {
  const lastModified = toSecond(v.lastModified);
  const ifMatch = headers.get("If-Match");
  if (ifMatch !== null) {
    const tags = entityTagList(ifMatch);
    if (tags !== "*" && !tags.some((t) => strongMatch(t, v.etag))) return "failed";
  } else {
    const since = httpDate(headers.get("If-Unmodified-Since"));
    if (since !== null && lastModified > since) return "failed";
  }
  const getOrHead = method === "GET" || method === "HEAD";
  const ifNoneMatch = headers.get("If-None-Match");
  if (ifNoneMatch !== null) {
    const tags = entityTagList(ifNoneMatch);
    const matched = tags === "*" || tags.some((t) => weakMatch(t, v.etag));
    if (matched) return getOrHead ? "not-modified" : "failed";
  } else if (getOrHead) {
    const since = httpDate(headers.get("If-Modified-Since"));
    if (since !== null && lastModified <= since) return "not-modified";
  }
  return "proceed";
}

/**
 * RFC 7233 §3.2: a Range is honoured only if If-Range (when sent) still describes the
 * object: an entity-tag by strong comparison, or a date equal to Last-Modified.
 */
export function ifRangeHolds(headers: Headers, v: { etag: string; lastModified: number }): boolean {
  const value = headers.get("If-Range");
  if (value === null) return true;
  if (parseEntityTag(value)) return strongMatch(value, v.etag);
  const date = httpDate(value);
  return date !== null && date === toSecond(v.lastModified);
}

// ------------------------------------------------------------------------------------------
// The response
// ------------------------------------------------------------------------------------------

/**
 * The files are stored by whoever held an upload form, so they are served as inert data:
 * `nosniff` keeps browsers from reinterpreting them (WHATWG Fetch §X-Content-Type-Options),
 * and a CSP `sandbox` puts an uploaded HTML or SVG file in an opaque origin (CSP3 §6.3.2.2),
 * so it cannot script the API's origin. CORS: public-read objects are readable from any origin.
 */
const FIXED_HEADERS: Record<string, string> = {
  "Accept-Ranges": "bytes",
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy": "sandbox",
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers":
    "Accept-Ranges, Content-Disposition, Content-Encoding, Content-Length, Content-Range, ETag, Last-Modified",
};

/**
 * A stored file is the account's data (a signed delivery, a customer's document) read on shared
 * phones and desks: no browser or proxy keeps a copy (RFC 9111 §5.2.2.5 `no-store`, §5.2.2.7
 * `private`; issue 52 item 3), unless the file was stored with a Cache-Control of its own
 * (`s3_response_headers`, an integration's explicit choice). ETag and ranges still work: they
 * need no cache.
 */
const DEFAULT_CACHE_CONTROL = "private, no-store";

function objectHeaders(object: R2Object): Headers {
  const headers = new Headers(FIXED_HEADERS);
  object.writeHttpMetadata(headers);
  if (!headers.has("Cache-Control")) headers.set("Cache-Control", DEFAULT_CACHE_CONTROL);
  if (!headers.has("Content-Type")) headers.set("Content-Type", "application/octet-stream");
  headers.set("ETag", object.httpEtag);
  headers.set("Last-Modified", object.uploaded.toUTCString());
  // S3 answers user metadata as x-amz-meta-* headers.
  for (const [k, v] of Object.entries(object.customMetadata ?? {})) headers.set(`x-amz-meta-${k}`, v);
  return headers;
}

/** RFC 7232 §4.1: what a 304 carries (the validators and caching fields, no body metadata). */
function notModifiedHeaders(full: Headers): Headers {
  const out = new Headers();
  for (const name of [
    "ETag",
    "Last-Modified",
    "Cache-Control",
    "Expires",
    "Access-Control-Allow-Origin",
    "Access-Control-Expose-Headers",
  ]) {
    const v = full.get(name);
    if (v !== null) out.set(name, v);
  }
  return out;
}

const noSuchKey = (key: string) =>
  new S3Error(404, "NoSuchKey", "The specified key does not exist.", { Key: key });

function withFixed(res: Response): Response {
  for (const [k, v] of Object.entries(FIXED_HEADERS)) res.headers.set(k, v);
  return res;
}

/** A body stored with a Content-Encoding is sent as stored (workerd would otherwise encode it again). */
function bodyInit(headers: Headers, status: number): ResponseInit {
  return headers.has("Content-Encoding")
    ? ({ status, headers, encodeBody: "manual" } as ResponseInit)
    : { status, headers };
}

/**
 * Answer a GET or HEAD for `key`. Without Range or conditional headers it is one R2 `get`;
 * otherwise a `head` first (the decision needs the size and validators), then a `get` of the
 * range guarded by the ETag just seen, so an object replaced in between is never served as a
 * mix of two versions (the whole decision is retried once on such a race).
 */
export async function serveObject(
  bucket: R2Bucket,
  key: string,
  request: Request,
  requestId: string,
  attempt = 0,
): Promise<Response> {
  const h = request.headers;
  const method = request.method;
  const simple =
    method === "GET" &&
    !h.has("Range") &&
    !h.has("If-Match") &&
    !h.has("If-None-Match") &&
    !h.has("If-Modified-Since") &&
    !h.has("If-Unmodified-Since");
  if (simple) {
    const object = await bucket.get(key);
    if (!object) return withFixed(s3ErrorResponse(noSuchKey(key), requestId));
    const headers = objectHeaders(object);
    headers.set("Content-Length", String(object.size));
    return new Response(object.body, bodyInit(headers, 200));
  }

  const head = await bucket.head(key);
  if (!head) return withFixed(s3ErrorResponse(noSuchKey(key), requestId));
  const validators = { etag: head.httpEtag, lastModified: head.uploaded.getTime() };
  const headers = objectHeaders(head);

  const pre = evaluatePreconditions(h, method, validators);
  if (pre === "not-modified")
    return new Response(null, { status: 304, headers: notModifiedHeaders(headers) });
  if (pre === "failed") {
    const err = new S3Error(
      412,
      "PreconditionFailed",
      "At least one of the pre-conditions you specified did not hold",
      {
        Condition: h.has("If-Match")
          ? "If-Match"
          : h.has("If-Unmodified-Since")
            ? "If-Unmodified-Since"
            : "If-None-Match",
      },
    );
    return withFixed(s3ErrorResponse(err, requestId));
  }

  const range = ifRangeHolds(h, validators)
    ? parseRange(h.get("Range"), head.size)
    : { kind: "none" as const };
  if (range.kind === "unsatisfiable") {
    const err = new S3Error(416, "InvalidRange", "The requested range is not satisfiable", {
      RangeRequested: h.get("Range") ?? "",
      ActualObjectSize: head.size,
    });
    const res = withFixed(s3ErrorResponse(err, requestId));
    res.headers.set("Content-Range", `bytes */${head.size}`);
    return res;
  }
  const status = range.kind === "range" ? 206 : 200;
  if (range.kind === "range") {
    headers.set("Content-Range", `bytes ${range.offset}-${range.offset + range.length - 1}/${head.size}`);
    headers.set("Content-Length", String(range.length));
  } else {
    headers.set("Content-Length", String(head.size));
  }
  if (method === "HEAD") return new Response(null, { status, headers });

  const object = await bucket.get(key, {
    range: range.kind === "range" ? { offset: range.offset, length: range.length } : undefined,
    onlyIf: { etagMatches: head.etag },
  });
  if (!object) return withFixed(s3ErrorResponse(noSuchKey(key), requestId));
  if (!("body" in object)) {
    // Replaced between head and get: decide again on the new version (once).
    if (attempt === 0) return serveObject(bucket, key, request, requestId, 1);
    const err = new S3Error(503, "SlowDown", "Please reduce your request rate.");
    return withFixed(s3ErrorResponse(err, requestId));
  }
  return new Response((object as R2ObjectBody).body, bodyInit(headers, status));
}
