// Test helpers for the storage modules: building multipart bodies byte by byte, feeding them
// in chosen chunk sizes, and reading streams back.

const enc = new TextEncoder();

export interface PartSpec {
  name: string;
  value: string | Uint8Array;
  filename?: string;
  contentType?: string;
  /** Raw header block to use instead of the generated one (without the blank line). */
  rawHeaders?: string;
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  return concatAll(parts);
}

export function concatAll(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** A multipart/form-data body as RFC 7578 senders write it (CRLF line ends, no padding). */
export function multipartBody(
  boundary: string,
  parts: PartSpec[],
  opts: { preamble?: string; epilogue?: string; close?: boolean } = {},
): Uint8Array {
  const chunks: Uint8Array[] = [];
  if (opts.preamble !== undefined) chunks.push(enc.encode(`${opts.preamble}\r\n`));
  for (const p of parts) {
    let headers = p.rawHeaders;
    if (headers === undefined) {
      headers = `Content-Disposition: form-data; name="${p.name}"`;
      if (p.filename !== undefined) headers += `; filename="${p.filename}"`;
      if (p.contentType !== undefined) headers += `\r\nContent-Type: ${p.contentType}`;
    }
    chunks.push(enc.encode(`--${boundary}\r\n${headers}\r\n\r\n`));
    chunks.push(typeof p.value === "string" ? enc.encode(p.value) : p.value);
    chunks.push(enc.encode("\r\n"));
  }
  if (opts.close !== false) chunks.push(enc.encode(`--${boundary}--\r\n`));
  if (opts.epilogue !== undefined) chunks.push(enc.encode(opts.epilogue));
  return concat(...chunks);
}

export interface CountingSource {
  stream: ReadableStream<Uint8Array>;
  /** Chunks handed to the consumer so far. */
  readonly pulled: number;
  /** Bytes handed to the consumer so far. */
  readonly bytesPulled: number;
  readonly cancelled: boolean;
}

/**
 * A pull-based source over `bytes`, cut in chunks of the given sizes (a number, a list
 * cycled through, or explicit cut offsets), that counts what was read from it.
 */
export function chunkedSource(bytes: Uint8Array, sizes: number | number[]): CountingSource {
  const list = Array.isArray(sizes) ? sizes : [sizes];
  let offset = 0;
  let i = 0;
  let pulled = 0;
  let bytesPulled = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (offset >= bytes.length) {
          controller.close();
          return;
        }
        const size = Math.max(1, list[i++ % list.length]);
        // A copy, as a network source would hand out fresh buffers.
        const chunk = bytes.slice(offset, offset + size);
        offset += chunk.length;
        pulled++;
        bytesPulled += chunk.length;
        controller.enqueue(chunk);
      },
      cancel() {
        cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return {
    stream,
    get pulled() {
      return pulled;
    },
    get bytesPulled() {
      return bytesPulled;
    },
    get cancelled() {
      return cancelled;
    },
  };
}

/** Cut `bytes` at the given offsets (sorted, within range). */
export function cutSource(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const points = [0, ...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length];
  const sizes: number[] = [];
  for (let k = 1; k < points.length; k++)
    if (points[k] > points[k - 1]) sizes.push(points[k] - points[k - 1]);
  return chunkedSource(bytes, sizes.length ? sizes : [bytes.length || 1]).stream;
}

export async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
  }
  return concatAll(chunks);
}

export function text(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

export function bytesOf(s: string): Uint8Array {
  return enc.encode(s);
}

/** Deterministic pseudo-random bytes (xorshift32), so failures reproduce. */
export function pseudoRandomBytes(length: number, seed = 0x9e3779b9): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
