import { imageSize } from "image-size";

/**
 * Image dimensions (and a JPEG's EXIF orientation) read from the file's headers, without
 * decoding pixels. The thumbnailer needs them BEFORE decoding: a decoded image costs
 * width × height × 4 bytes (plus the decoder's own buffer), so an image too large for the
 * Worker's 128 MB is skipped instead of crashing the isolate.
 *
 * The headers are read by the `image-size` library (PNG IHDR, GIF screen descriptor, BMP
 * info headers, WebP VP8/VP8L/VP8X, JPEG SOFn frames and EXIF orientation, and more).
 */

export type ImageInfo = {
  width: number;
  height: number;
  /** EXIF orientation 1–8 (1 = as stored); only JPEG carries it here. */
  orientation: number;
};

/** image-size's names for the types the thumbnailer decodes. */
const TYPES: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/bmp": "bmp",
};

/** Dimensions of a PNG, JPEG, GIF, WebP or BMP; null for anything else or a damaged header. */
export function imageInfo(b: Uint8Array, mimetype: string): ImageInfo | null {
  const expected = TYPES[mimetype];
  if (!expected) return null;
  try {
    const size = imageSize(b);
    if (size.type !== expected || !size.width || !size.height) return null;
    const orientation = mimetype === "image/jpeg" && size.orientation ? size.orientation : 1;
    return { width: size.width, height: size.height, orientation };
  } catch {
    return null; // a header the library cannot read: no thumbnail, not a failure
  }
}
