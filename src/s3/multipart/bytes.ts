/** Byte-level helpers of the parser: delimiter search across chunks, RFC 2046 framing. */
import { malformed } from "./types";

export const CR = 0x0d;
export const LF = 0x0a;
export const HYPHEN = 0x2d;
export const SP = 0x20;
export const HT = 0x09;
export const CRLF = new Uint8Array([CR, LF]);
export const CRLFCRLF = new Uint8Array([CR, LF, CR, LF]);
export const EMPTY = new Uint8Array(0);
/** Bound on transport padding after a delimiter (RFC 2046 allows "*LWSP-char"; we stop somewhere). */
export const MAX_TRANSPORT_PADDING = 1024;

export const ascii = new TextEncoder();
export const utf8Decoder = new TextDecoder("utf-8");

// ------------------------------------------------------------------------------------------
// Byte search helpers
// ------------------------------------------------------------------------------------------

/** First index >= from where `needle` occurs in `hay`, or -1. */
export function indexOfBytes(hay: Uint8Array, needle: Uint8Array, from = 0): number {
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

export function startsWithBytes(hay: Uint8Array, needle: Uint8Array, at = 0): boolean {
  if (hay.length - at < needle.length) return false;
  for (let j = 0; j < needle.length; j++) if (hay[at + j] !== needle[j]) return false;
  return true;
}

/** Where to resume a failed search for `needle` once more bytes are appended to `hay`. */
export function resumeAt(hay: Uint8Array, needle: Uint8Array): number {
  return Math.max(0, hay.length - needle.length + 1);
}

export function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

export function asBytes(chunk: unknown): Uint8Array {
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
export function delimiterTail(buf: Uint8Array, at: number): { length: number; close: boolean } | null {
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
