/**
 * Thumbnails of image attachments, made from the files queue with Photon (@cf-wasm/photon:
 * Rust's `image` codecs compiled to WebAssembly, built for workerd).
 *
 * Memory: decoding holds the pixels (4 bytes each, plus the decoder's RGB buffer while it
 * converts), inside WebAssembly memory that never shrinks once grown. Images are therefore
 * measured from their headers first (image-info.ts) and skipped above THUMBNAIL_MAX_PIXELS
 * (a 4096 × 3072 photo, 12.6 MP, about 90 MB at peak) or THUMBNAIL_MAX_SOURCE_BYTES, so one
 * image cannot exhaust the isolate's 128 MB. Skipped images keep `thumbnail: null`.
 *
 * The output fits in THUMBNAIL_MAX_SIDE × THUMBNAIL_MAX_SIDE, keeps the aspect ratio, is
 * never enlarged, follows a JPEG's EXIF orientation (so a portrait phone photo is upright),
 * and is a JPEG for JPEG sources, a PNG otherwise (keeps transparency).
 */
import { imageInfo } from "./image-info";
import { THUMBNAIL_TYPES } from "./mimetype";

export const THUMBNAIL_MAX_SIDE = 200;
export const THUMBNAIL_MAX_PIXELS = 4096 * 3072;
export const THUMBNAIL_MAX_SOURCE_BYTES = 20 * 1024 * 1024;

export type Thumbnail = { bytes: Uint8Array; contentType: "image/png" | "image/jpeg"; ext: "png" | "jpg" };
export type ThumbnailOutcome = { ok: true; thumbnail: Thumbnail } | { ok: false; reason: string };

/** Target size fitting in `max` × `max`, aspect kept, never larger than the source. */
export function fitWithin(width: number, height: number, max = THUMBNAIL_MAX_SIDE) {
  const scale = Math.min(1, max / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/**
 * Apply EXIF orientation (EXIF 2.3 §4.6.4, tag 0x0112) to RGBA pixels: for each displayed
 * pixel, the stored pixel it shows. Orientations 5–8 swap width and height.
 */
export function orientPixels(px: Uint8Array, w: number, h: number, orientation: number) {
  if (orientation < 2 || orientation > 8) return { px, width: w, height: h };
  const swap = orientation >= 5;
  const ow = swap ? h : w;
  const oh = swap ? w : h;
  const out = new Uint8Array(px.length);
  for (let oy = 0; oy < oh; oy++) {
    for (let ox = 0; ox < ow; ox++) {
      let sx: number;
      let sy: number;
      switch (orientation) {
        case 2: // mirrored horizontally
          sx = w - 1 - ox;
          sy = oy;
          break;
        case 3: // rotated 180°
          sx = w - 1 - ox;
          sy = h - 1 - oy;
          break;
        case 4: // mirrored vertically
          sx = ox;
          sy = h - 1 - oy;
          break;
        case 5: // transposed
          sx = oy;
          sy = ox;
          break;
        case 6: // to be rotated 90° clockwise
          sx = oy;
          sy = h - 1 - ox;
          break;
        case 7: // transversed
          sx = w - 1 - oy;
          sy = h - 1 - ox;
          break;
        default: // 8: to be rotated 90° counter-clockwise
          sx = w - 1 - oy;
          sy = ox;
      }
      const s = (sy * w + sx) * 4;
      const o = (oy * ow + ox) * 4;
      out[o] = px[s];
      out[o + 1] = px[s + 1];
      out[o + 2] = px[s + 2];
      out[o + 3] = px[s + 3];
    }
  }
  return { px: out, width: ow, height: oh };
}

export async function makeThumbnail(bytes: Uint8Array, mimetype: string): Promise<ThumbnailOutcome> {
  if (!THUMBNAIL_TYPES.has(mimetype)) return { ok: false, reason: `no thumbnails for ${mimetype}` };
  if (bytes.length > THUMBNAIL_MAX_SOURCE_BYTES) return { ok: false, reason: "file too large" };
  const info = imageInfo(bytes, mimetype);
  if (!info || info.width === 0 || info.height === 0) return { ok: false, reason: "unreadable image header" };
  if (info.width * info.height > THUMBNAIL_MAX_PIXELS) {
    return { ok: false, reason: `image too large (${info.width}x${info.height})` };
  }
  // Loaded here, not at the top: only the queue consumer pays for instantiating the module.
  const { PhotonImage, resize, SamplingFilter } = await import("@cf-wasm/photon");
  let source: InstanceType<typeof PhotonImage> | null = null;
  let small: InstanceType<typeof PhotonImage> | null = null;
  let oriented: InstanceType<typeof PhotonImage> | null = null;
  try {
    try {
      source = PhotonImage.new_from_byteslice(bytes);
    } catch (err) {
      return { ok: false, reason: `undecodable image: ${String(err)}` };
    }
    const w = source.get_width();
    const h = source.get_height();
    const target = fitWithin(w, h);
    // Triangle (bilinear) widens its support with the scale factor in `image`'s resize, so a
    // large reduction still averages every source pixel; Lanczos would cost far more CPU.
    small =
      target.width === w && target.height === h
        ? source
        : resize(source, target.width, target.height, SamplingFilter.Triangle);
    let out = small;
    if (info.orientation > 1) {
      const o = orientPixels(small.get_raw_pixels(), small.get_width(), small.get_height(), info.orientation);
      oriented = new PhotonImage(o.px, o.width, o.height);
      out = oriented;
    }
    const thumbnail: Thumbnail =
      mimetype === "image/jpeg"
        ? { bytes: out.get_bytes_jpeg(82), contentType: "image/jpeg", ext: "jpg" }
        : { bytes: out.get_bytes(), contentType: "image/png", ext: "png" };
    return { ok: true, thumbnail };
  } finally {
    oriented?.free();
    if (small && small !== source) small.free();
    source?.free();
  }
}
