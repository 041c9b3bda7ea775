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
