/**
 * Image dimensions (and a JPEG's EXIF orientation) read from the file's headers, without
 * decoding pixels. The thumbnailer needs them BEFORE decoding: a decoded image costs
 * width × height × 4 bytes (plus the decoder's own buffer), so an image too large for the
 * Worker's 128 MB is skipped instead of crashing the isolate.
 *
 * Header layouts: PNG (ISO/IEC 15948 §11.2.2 IHDR), GIF89a (§18 Logical Screen Descriptor),
 * BMP (BITMAPINFOHEADER / BITMAPCOREHEADER), WebP (RFC 9649 §2.5–2.7: VP8, VP8L, VP8X),
 * JPEG (ITU T.81 §B.2.2 frame header, SOFn markers) and EXIF 2.3 (§4.6.4 IFD0 tag 0x0112).
 */

export type ImageInfo = {
  width: number;
  height: number;
  /** EXIF orientation 1–8 (1 = as stored); only JPEG carries it here. */
  orientation: number;
};

const u16be = (b: Uint8Array, i: number) => (b[i] << 8) | b[i + 1];
const u16le = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8);
const u24le = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8) | (b[i + 2] << 16);
const u32be = (b: Uint8Array, i: number) =>
  ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0;
const i32le = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);
const text = (b: Uint8Array, i: number, n: number) => String.fromCharCode(...b.subarray(i, i + n));

/** EXIF orientation from an APP1 segment body (`Exif\0\0` + TIFF structure), 1 when absent. */
function exifOrientation(b: Uint8Array, start: number, end: number): number {
  if (text(b, start, 6) !== "Exif\0\0") return 1;
  const tiff = start + 6;
  if (tiff + 8 > end) return 1;
  const le = text(b, tiff, 2) === "II";
  const r16 = (i: number) => (le ? u16le(b, i) : u16be(b, i));
  const r32 = (i: number) => (le ? (u16le(b, i) | (u16le(b, i + 2) << 16)) >>> 0 : u32be(b, i));
  if (r16(tiff + 2) !== 42) return 1;
  const ifd = tiff + r32(tiff + 4);
  if (ifd + 2 > end) return 1;
  const count = r16(ifd);
  for (let k = 0; k < count; k++) {
    const entry = ifd + 2 + k * 12;
    if (entry + 12 > end) break;
    if (r16(entry) === 0x0112) {
      const v = r16(entry + 8);
      return v >= 1 && v <= 8 ? v : 1;
    }
  }
  return 1;
}

function jpegInfo(b: Uint8Array): ImageInfo | null {
  let i = 2;
  let orientation = 1;
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1];
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2; // standalone markers carry no length
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return null; // end of image / scan before any frame header
    const len = u16be(b, i + 2);
    if (len < 2) return null;
    if (marker === 0xe1)
      orientation = Math.max(orientation, exifOrientation(b, i + 4, Math.min(b.length, i + 2 + len)));
    // SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (i + 9 > b.length) return null;
      return { height: u16be(b, i + 5), width: u16be(b, i + 7), orientation };
    }
    i += 2 + len;
  }
  return null;
}

function webpInfo(b: Uint8Array): ImageInfo | null {
  const chunk = text(b, 12, 4);
  if (chunk === "VP8 " && b.length >= 30 && b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a) {
    return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff, orientation: 1 };
  }
  if (chunk === "VP8L" && b.length >= 25 && b[20] === 0x2f) {
    const bits = b[21] | (b[22] << 8) | (b[23] << 16) | (b[24] << 24);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1, orientation: 1 };
  }
  if (chunk === "VP8X" && b.length >= 30) {
    return { width: u24le(b, 24) + 1, height: u24le(b, 27) + 1, orientation: 1 };
  }
  return null;
}

/** Dimensions of a PNG, JPEG, GIF, WebP or BMP; null for anything else or a damaged header. */
export function imageInfo(b: Uint8Array, mimetype: string): ImageInfo | null {
  switch (mimetype) {
    case "image/png":
      if (b.length < 24 || text(b, 12, 4) !== "IHDR") return null;
      return { width: u32be(b, 16), height: u32be(b, 20), orientation: 1 };
    case "image/gif":
      if (b.length < 10) return null;
      return { width: u16le(b, 6), height: u16le(b, 8), orientation: 1 };
    case "image/bmp": {
      if (b.length < 26) return null;
      const headerSize = i32le(b, 14);
      if (headerSize === 12) return { width: u16le(b, 18), height: u16le(b, 20), orientation: 1 };
      return { width: Math.abs(i32le(b, 18)), height: Math.abs(i32le(b, 22)), orientation: 1 };
    }
    case "image/webp":
      return webpInfo(b);
    case "image/jpeg":
      return jpegInfo(b);
    default:
      return null;
  }
}
