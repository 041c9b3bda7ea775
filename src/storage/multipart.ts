/**
 * A streaming multipart/form-data parser (RFC 7578 over RFC 2046 §5.1) for the storage POST
 * endpoint, where the form's fields come first and the uploaded file is the last part.
 *
 * - The parts before the file part are read into memory, bounded by `maxFieldsBytes`
 *   (S3: "The form data and boundaries (excluding the contents of the file) cannot exceed
 *   20KB."; this service's default is 64 KiB).
 * - The file part's body is exposed as a pull-based ReadableStream: the source is read only
 *   when the consumer pulls, and the parser never holds more than the chunk in hand plus
 *   fewer than `boundary.length + 4` bytes of a possible delimiter. A delimiter split
 *   across chunks is found because that tail is kept and searched together with the next
 *   chunk.
 * - The file part is the `form-data` part named `file` (name matched case-insensitively, as
 *   S3 matches form field names); a `filename` parameter on other parts does not make them
 *   the file (some clients put one on every part). Parts after the file are ignored, as S3
 *   does ("Any fields below it are ignored."), and the rest of the body is not read.
 * - The file stream closes only after the delimiter that ends the file has been seen; a body
 *   that ends early makes the stream error, so a truncated upload is never stored as complete.
 *
 * Nothing here knows about S3: errors are `MultipartError` / `ByteLimitError`, which
 * s3-errors.ts maps to S3's codes.
 */

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

const CR = 0x0d;
const LF = 0x0a;
const HYPHEN = 0x2d;
const SP = 0x20;
const HT = 0x09;
const CRLF = new Uint8Array([CR, LF]);
const CRLFCRLF = new Uint8Array([CR, LF, CR, LF]);
const EMPTY = new Uint8Array(0);
/** Bound on transport padding after a delimiter (RFC 2046 allows "*LWSP-char"; we stop somewhere). */
const MAX_TRANSPORT_PADDING = 1024;

const ascii = new TextEncoder();
const utf8Decoder = new TextDecoder("utf-8");

function malformed(detail: string): MultipartError {
  return new MultipartError("malformed", `Malformed multipart/form-data body: ${detail}`);
}

// ------------------------------------------------------------------------------------------
// Header parameters (RFC 9110 §5.6.6 parameters, RFC 2045 §5.1 / RFC 2183 §2 for
// Content-Disposition).
// ------------------------------------------------------------------------------------------

interface ParsedHeaderValue {
  /** The value before the first ';', trimmed and lowercased (media type or disposition type). */
  value: string;
  /** Parameters by lowercased name (parameter names are case-insensitive); first one wins. */
  params: Map<string, string>;
}

/**
 * Parse `type; name=value; name="quoted value"`. Quoted strings accept `\"` and `\\` as
 * quoted-pairs (what RFC 9110 §5.6.4 senders such as Go's mime/multipart write) but keep any
 * other backslash literally, because browsers do not escape backslashes in file names
 * (WHATWG HTML "multipart/form-data encoding algorithm": only CR, LF and `"` are
 * percent-escaped), and S3 documents Windows paths like `C:\Program Files\file.txt` there.
 */
export function parseHeaderValue(header: string): ParsedHeaderValue {
  const params = new Map<string, string>();
  let i = header.indexOf(";");
  const value = (i < 0 ? header : header.slice(0, i)).trim().toLowerCase();
  if (i < 0) return { value, params };
  const n = header.length;
  while (i < n) {
    // at ';'
    i++;
    while (i < n && (header[i] === " " || header[i] === "\t")) i++;
    let nameStart = i;
    while (i < n && header[i] !== "=" && header[i] !== ";") i++;
    const name = header.slice(nameStart, i).trim().toLowerCase();
    if (i >= n || header[i] === ";") continue; // a parameter without a value: ignored
    i++; // '='
    while (i < n && (header[i] === " " || header[i] === "\t")) i++;
    let val = "";
    if (header[i] === '"') {
      i++;
      let closed = false;
      while (i < n) {
        const c = header[i];
        if (c === "\\" && i + 1 < n && (header[i + 1] === '"' || header[i + 1] === "\\")) {
          val += header[i + 1];
          i += 2;
          continue;
        }
        if (c === '"') {
          closed = true;
          i++;
          break;
        }
        val += c;
        i++;
      }
      if (!closed) throw malformed("unterminated quoted-string in a header parameter");
      while (i < n && header[i] !== ";") i++; // anything between the closing quote and ';' is junk
    } else {
      nameStart = i;
      while (i < n && header[i] !== ";") i++;
      val = header.slice(nameStart, i).trim();
    }
    if (name && !params.has(name)) params.set(name, val);
  }
  return { value, params };
}

/**
 * The boundary of a `multipart/form-data` Content-Type. Throws `not-multipart` for another
 * media type (S3 answers 412) and `malformed` for a missing or invalid boundary (S3: 400
 * MalformedPOSTRequest). RFC 2046 §5.1.1: 1 to 70 characters, not ending with a space.
 */
export function parseBoundary(contentType: string | null | undefined): string {
  if (!contentType) throw new MultipartError("not-multipart", "Content-Type is not multipart/form-data");
  const { value, params } = parseHeaderValue(contentType);
  if (value !== "multipart/form-data") {
    throw new MultipartError("not-multipart", "Content-Type is not multipart/form-data");
  }
  const boundary = params.get("boundary");
  if (boundary === undefined || boundary.length === 0) throw malformed("no boundary parameter");
  if (boundary.length > 70 || boundary.endsWith(" ") || !/^[\x20-\x7e]+$/.test(boundary)) {
    throw malformed("invalid boundary parameter");
  }
  return boundary;
}

// ------------------------------------------------------------------------------------------
// Byte search helpers
// ------------------------------------------------------------------------------------------

/** First index >= from where `needle` occurs in `hay`, or -1. */
function indexOfBytes(hay: Uint8Array, needle: Uint8Array, from = 0): number {
  const first = needle[0];
  const last = hay.length - needle.length;
  let i = hay.indexOf(first, from);
  while (i !== -1 && i <= last) {
    let j = 1;
    while (j < needle.length && hay[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
    i = hay.indexOf(first, i + 1);
  }
  return -1;
}

function startsWithBytes(hay: Uint8Array, needle: Uint8Array, at = 0): boolean {
  if (hay.length - at < needle.length) return false;
  for (let j = 0; j < needle.length; j++) if (hay[at + j] !== needle[j]) return false;
  return true;
}

/** Whether `hay[at..]` (possibly shorter than needle) is a prefix of `needle`. */
function _isPrefixOfNeedle(hay: Uint8Array, needle: Uint8Array, at: number): boolean {
  const n = Math.min(hay.length - at, needle.length);
  for (let j = 0; j < n; j++) if (hay[at + j] !== needle[j]) return false;
  return true;
}

/** Where to resume a failed search for `needle` once more bytes are appended to `hay`. */
function resumeAt(hay: Uint8Array, needle: Uint8Array): number {
  return Math.max(0, hay.length - needle.length + 1);
}

function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

function asBytes(chunk: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk;
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError("multipart body chunks must be bytes");
}

/**
 * What comes after `--boundary` on a delimiter line (RFC 2046 §5.1.1: `transport-padding
 * CRLF` before the next part, or `--` for the close delimiter). Returns the number of bytes
 * of the line tail to consume and whether it closes the body, or null when more bytes are
 * needed. Throws when the line is not a delimiter line.
 */
function delimiterTail(buf: Uint8Array, at: number): { length: number; close: boolean } | null {
  if (buf.length - at < 2) {
    // "-" alone or "\r" alone could still become "--" / CRLF
    if (buf.length - at === 1) {
      const c = buf[at];
      if (c !== HYPHEN && c !== CR && c !== SP && c !== HT) throw malformed("junk after a boundary");
    }
    return null;
  }
  if (buf[at] === HYPHEN && buf[at + 1] === HYPHEN) return { length: 2, close: true };
  let i = at;
  while (i < buf.length && (buf[i] === SP || buf[i] === HT)) {
    i++;
    if (i - at > MAX_TRANSPORT_PADDING) throw malformed("too much transport padding after a boundary");
  }
  if (buf.length - i < 2) {
    if (buf.length - i === 1 && buf[i] !== CR) throw malformed("junk after a boundary");
    return null;
  }
  if (buf[i] === CR && buf[i + 1] === LF) return { length: i + 2 - at, close: false };
  throw malformed("junk after a boundary");
}

// ------------------------------------------------------------------------------------------
// The parser
// ------------------------------------------------------------------------------------------

/** A read buffer over the source for the bounded pre-file phase. */
class PreFileBuffer {
  buf: Uint8Array = EMPTY;
  /** Bytes consumed (dropped from the front of `buf`) since the start of the body. */
  consumed = 0;
  done = false;
  private store: Uint8Array = EMPTY;
  private start = 0;
  private end = 0;

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly limit: number,
  ) {}

  /**
   * Read one more chunk. Called only when what is searched for is not in `buf`, so every
   * byte of `buf` precedes the file's content: past the limit, the form is too large.
   */
  async more(): Promise<boolean> {
    if (this.consumed + this.buf.length >= this.limit) {
      throw new MultipartError(
        "fields-too-large",
        `form fields before the file exceed ${this.limit} bytes`,
        this.limit,
      );
    }
    if (this.done) return false;
    for (;;) {
      const r = await this.reader.read();
      if (r.done) {
        this.done = true;
        return false;
      }
      const chunk = asBytes(r.value);
      if (chunk.length === 0) continue;
      this.append(chunk);
      return true;
    }
  }

  private append(chunk: Uint8Array): void {
    const used = this.end - this.start;
    if (this.end + chunk.length > this.store.length) {
      // Compact and grow (doubling) so that many tiny chunks stay linear.
      const need = used + chunk.length;
      if (need > this.store.length) {
        const next = new Uint8Array(Math.max(need, this.store.length * 2, 1024));
        next.set(this.store.subarray(this.start, this.end), 0);
        this.store = next;
      } else {
        this.store.copyWithin(0, this.start, this.end);
      }
      this.start = 0;
      this.end = used;
    }
    this.store.set(chunk, this.end);
    this.end += chunk.length;
    this.buf = this.store.subarray(this.start, this.end);
  }

  consume(n: number): Uint8Array {
    const out = this.buf.subarray(0, n);
    this.start += n;
    this.consumed += n;
    this.buf = this.store.subarray(this.start, this.end);
    return out;
  }

  /** Hand over the unconsumed bytes (copied: the store is not reused after this). */
  takeRest(): Uint8Array {
    const rest = this.buf.slice();
    this.consume(this.buf.length);
    return rest;
  }
}

interface PartHeaders {
  disposition: string;
  name: string;
  filename: string | null;
  contentType: string | null;
}

function parsePartHeaders(block: Uint8Array): PartHeaders {
  // RFC 2046: headers are US-ASCII; browsers send UTF-8 names and file names raw, so decode
  // as UTF-8 (RFC 7578 §5.1.3 notes the deployed practice).
  const text = utf8Decoder.decode(block);
  const headers = new Map<string, string>();
  let lastName: string | null = null;
  for (const line of text.split("\r\n")) {
    if (line.length === 0) continue;
    if ((line[0] === " " || line[0] === "\t") && lastName) {
      headers.set(lastName, `${headers.get(lastName)} ${line.trim()}`); // obsolete line folding
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) throw malformed("a part header line without a name");
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
    lastName = name;
  }
  const cd = headers.get("content-disposition");
  // RFC 7578 §4.2: "Each part MUST contain a Content-Disposition header field ... [with] a
  // "name" parameter".
  if (cd === undefined) throw malformed("a part without Content-Disposition");
  const { value, params } = parseHeaderValue(cd);
  const name = params.get("name");
  if (name === undefined) throw malformed("a part without a name");
  return {
    disposition: value,
    name,
    // RFC 7578 §4.2: `filename*` (RFC 5987) "MUST NOT be used", so it is not read.
    filename: params.has("filename") ? params.get("filename")! : null,
    contentType: headers.get("content-type") ?? null,
  };
}

/**
 * Parse a multipart/form-data body up to the start of its `file` part.
 *
 * Resolves with the fields that precede the file and the file part (its body as a stream)
 * or `file: null` when the body closes without one. Rejects with a `MultipartError`:
 * `not-multipart` (not a multipart/form-data Content-Type), `fields-too-large` (more than
 * `maxFieldsBytes` before the file's content) or `malformed`. Duplicate field names are
 * joined with "," in order (S3's rule for repeated fields, SigV2 POST docs).
 *
 * The caller must read or cancel `file.stream`; cancelling it cancels the body.
 */
export async function parseMultipartForm(
  body: ReadableStream<Uint8Array> | null | undefined,
  contentTypeHeader: string | null | undefined,
  options: ParseMultipartOptions = {},
): Promise<MultipartForm> {
  const boundary = parseBoundary(contentTypeHeader);
  const maxFieldsBytes = options.maxFieldsBytes ?? DEFAULT_MAX_FIELDS_BYTES;
  if (!body) throw malformed("empty body");

  const dashBoundary = ascii.encode(`--${boundary}`);
  // RFC 2046: "The boundary delimiter MUST occur at the beginning of a line, i.e., following
  // a CRLF, and the initial CRLF is considered to be attached to the boundary delimiter line
  // rather than part of the preceding part."
  const delimiter = concatBytes(CRLF, dashBoundary);

  const reader = body.getReader();
  const input = new PreFileBuffer(reader, maxFieldsBytes);
  const fields = new Map<string, FormField>();
  let handedOver = false;

  try {
    // 1. The first dash-boundary: at the very start, or after a preamble and CRLF. The
    //    preamble is ignored (RFC 2046: "implementations must ignore anything that appears
    //    before the first boundary delimiter line").
    // Each search resumes where the previous one could not have matched, so a body
    // trickled in tiny chunks costs linear, not quadratic, time.
    let from = 0;
    for (;;) {
      if (startsWithBytes(input.buf, dashBoundary)) {
        input.consume(dashBoundary.length);
        break;
      }
      const at = indexOfBytes(input.buf, delimiter, from);
      if (at >= 0) {
        input.consume(at + delimiter.length);
        break;
      }
      from = resumeAt(input.buf, delimiter);
      if (!(await input.more())) throw malformed("no boundary delimiter");
    }

    for (;;) {
      // 2. The rest of the delimiter line.
      let tail = delimiterTail(input.buf, 0);
      while (tail === null) {
        if (!(await input.more())) throw malformed("body ends inside a boundary line");
        tail = delimiterTail(input.buf, 0);
      }
      input.consume(tail.length);
      if (tail.close) return { fields, file: null }; // the epilogue is ignored

      // 3. The part headers, up to the blank line (or none: "A body part that starts with a
      //    blank line ... is allowed", RFC 2046 §5.1.1).
      let block: Uint8Array;
      from = 0;
      for (;;) {
        if (startsWithBytes(input.buf, CRLF)) {
          input.consume(2);
          block = EMPTY;
          break;
        }
        const end = indexOfBytes(input.buf, CRLFCRLF, from);
        if (end >= 0) {
          block = input.consume(end + 4).subarray(0, end);
          break;
        }
        from = resumeAt(input.buf, CRLFCRLF);
        if (!(await input.more())) throw malformed("body ends inside part headers");
      }
      const part = parsePartHeaders(block);

      // 4. The file part: hand the rest of the body to a stream.
      if (part.disposition === "form-data" && part.name.toLowerCase() === "file") {
        if (input.consumed > maxFieldsBytes) {
          throw new MultipartError(
            "fields-too-large",
            `form fields before the file exceed ${maxFieldsBytes} bytes`,
            maxFieldsBytes,
          );
        }
        const offset = input.consumed;
        const stream = fileStream(reader, input.takeRest(), delimiter);
        handedOver = true;
        return {
          fields,
          file: { name: part.name, filename: part.filename, contentType: part.contentType, offset, stream },
        };
      }

      // 5. A field: its value runs to the next delimiter.
      let end: number;
      from = 0;
      for (;;) {
        end = indexOfBytes(input.buf, delimiter, from);
        if (end >= 0) break;
        from = resumeAt(input.buf, delimiter);
        if (!(await input.more())) throw malformed("body ends inside a part");
      }
      const value = utf8Decoder.decode(input.buf.subarray(0, end));
      input.consume(end + delimiter.length);
      const key = part.name.toLowerCase();
      const prev = fields.get(key);
      if (prev) prev.value = `${prev.value},${value}`;
      else fields.set(key, { name: part.name, value });
    }
  } finally {
    if (!handedOver) {
      // The body is not needed any more (done, or failed): release it.
      reader.cancel().catch(() => {});
    }
  }
}

/**
 * The file part's body as a pull stream. `leftover` is what the pre-file phase had already
 * read past the file part's headers.
 */
function fileStream(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  leftover: Uint8Array,
  delimiter: Uint8Array,
): ReadableStream<Uint8Array> {
  const dlen = delimiter.length;
  /** Bytes not yet emitted that may be the start of the delimiter (always < dlen bytes). */
  let pending: Uint8Array = EMPTY;
  let first: Uint8Array | null = leftover;
  /** After the delimiter: the bytes of its line tail seen so far, or null while in data. */
  let after: Uint8Array | null = null;
  let finished = false;

  async function read(): Promise<Uint8Array | null> {
    if (first) {
      const f = first;
      first = null;
      return f;
    }
    for (;;) {
      const r = await reader.read();
      if (r.done) return null;
      const chunk = asBytes(r.value);
      if (chunk.length > 0) return chunk;
    }
  }

  /**
   * Scan `pending ++ data` (without copying `data`) for the delimiter. Returns the pieces
   * that are surely file content, and either the bytes after the delimiter (found) or the
   * new pending tail (the longest suffix that is a proper prefix of the delimiter).
   */
  function scan(data: Uint8Array): { emit: Uint8Array[]; found: Uint8Array | null } {
    const p = pending.length;
    const total = p + data.length;
    const at = (i: number) => (i < p ? pending[i] : data[i - p]);
    const matchesAt = (i: number, n: number) => {
      for (let j = 0; j < n; j++) if (at(i + j) !== delimiter[j]) return false;
      return true;
    };
    const slice = (from: number, to: number): Uint8Array[] => {
      const out: Uint8Array[] = [];
      if (from < p) out.push(pending.subarray(from, Math.min(to, p)));
      if (to > p) out.push(data.subarray(Math.max(from, p) - p, to - p));
      return out.filter((b) => b.length > 0);
    };

    let found = -1;
    // Candidates starting in the pending tail (few; it is shorter than the delimiter).
    for (let i = 0; i < p && found < 0; i++) {
      if (pending[i] === CR && i + dlen <= total && matchesAt(i, dlen)) found = i;
    }
    if (found < 0) {
      const j = indexOfBytes(data, delimiter);
      if (j >= 0) found = p + j;
    }
    if (found >= 0) {
      const emit = slice(0, found);
      const rest = found + dlen;
      const tail = rest >= p ? data.subarray(rest - p) : concatBytes(pending.subarray(rest), data);
      // Only the delimiter line's tail is looked at; what follows is ignored.
      return { emit, found: tail.slice(0, MAX_TRANSPORT_PADDING + 8) };
    }
    // No full match: keep the longest suffix that could still become the delimiter.
    let keep = total;
    for (let s = Math.max(0, total - (dlen - 1)); s < total; s++) {
      if (at(s) === CR && matchesAt(s, total - s)) {
        keep = s;
        break;
      }
    }
    const emit = slice(0, keep);
    const nextPending = new Uint8Array(total - keep);
    for (let i = keep; i < total; i++) nextPending[i - keep] = at(i);
    pending = nextPending;
    return { emit, found: null };
  }

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          for (;;) {
            if (after === null) {
              const data = await read();
              if (data === null) throw malformed("body ends inside the file part");
              const { emit, found } = scan(data);
              for (const piece of emit) controller.enqueue(piece);
              if (found !== null) {
                pending = EMPTY;
                after = found;
              }
              if (emit.length > 0) return;
              continue;
            }
            // After the delimiter: confirm it is a delimiter line, then close. The parts
            // after the file (and the epilogue) are ignored and not read.
            const tail = delimiterTail(after, 0);
            if (tail === null) {
              const more = await read();
              if (more === null) throw malformed("body ends inside a boundary line");
              after = concatBytes(after, more).slice(0, MAX_TRANSPORT_PADDING + 8);
              continue;
            }
            finished = true;
            controller.close();
            reader.cancel().catch(() => {});
            return;
          }
        } catch (err) {
          finished = true;
          reader.cancel(err).catch(() => {});
          throw err;
        }
      },
      async cancel(reason) {
        if (!finished) await reader.cancel(reason).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}

// ------------------------------------------------------------------------------------------
// Byte counting / limiting
// ------------------------------------------------------------------------------------------

export class ByteLimitError extends Error {
  readonly kind: "too-large" | "too-small";
  /** Bytes seen: for `too-large`, the count when the limit was passed (a lower bound). */
  readonly size: number;
  readonly limit: number;

  constructor(kind: "too-large" | "too-small", size: number, limit: number) {
    super(kind === "too-large" ? `body exceeds ${limit} bytes` : `body is smaller than ${limit} bytes`);
    this.name = "ByteLimitError";
    this.kind = kind;
    this.size = size;
    this.limit = limit;
  }
}

export interface ByteCounter {
  /** Pipe the file through this; it errors (ByteLimitError) past `max` or, at the end, under `min`. */
  readonly stream: TransformStream<Uint8Array, Uint8Array>;
  /** Bytes that have passed so far. */
  readonly bytes: number;
}

/**
 * Count bytes through a TransformStream and error as soon as more than `max` have passed (so
 * an oversized upload is refused while streaming, not after buffering it), or at the end when
 * fewer than `min` did. This is how `content-length-range` is enforced; bounds are inclusive
 * as on S3.
 */
export function byteLimiter(limits: { max?: number; min?: number } = {}): ByteCounter {
  const max = limits.max ?? Number.POSITIVE_INFINITY;
  const min = limits.min ?? 0;
  let bytes = 0;
  const stream = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      bytes += chunk.byteLength;
      if (bytes > max) throw new ByteLimitError("too-large", bytes, max);
      controller.enqueue(chunk);
    },
    flush() {
      if (bytes < min) throw new ByteLimitError("too-small", bytes, min);
    },
  });
  return {
    stream,
    get bytes() {
      return bytes;
    },
  };
}
