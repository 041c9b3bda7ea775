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

import {
  asBytes,
  ascii,
  CR,
  CRLF,
  CRLFCRLF,
  concatBytes,
  delimiterTail,
  EMPTY,
  indexOfBytes,
  MAX_TRANSPORT_PADDING,
  resumeAt,
  startsWithBytes,
  utf8Decoder,
} from "./bytes";
import { parseBoundary, parsePartHeaders } from "./headers";
import {
  DEFAULT_MAX_FIELDS_BYTES,
  type FormField,
  MultipartError,
  type MultipartForm,
  malformed,
  type ParseMultipartOptions,
} from "./types";

// ------------------------------------------------------------------------------------------
// The parser
// ------------------------------------------------------------------------------------------

/** A read buffer over the source for the bounded pre-file phase. */
export class PreFileBuffer {
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
