import { describe, expect, it } from "vitest";
import { imageInfo } from "../../src/services/files/image-info";
import { fitWithin, makeThumbnail, orientPixels } from "../../src/services/files/thumbnails";
import { jpegBytes, pngBytes } from "./helpers";

/** Insert an EXIF APP1 segment (big-endian TIFF, IFD0 with one Orientation entry) after SOI. */
function withExifOrientation(jpeg: Uint8Array, orientation: number): Uint8Array {
  const tiff = [
    0x4d,
    0x4d,
    0x00,
    0x2a,
    0x00,
    0x00,
    0x00,
    0x08, // MM, 42, IFD0 at 8
    0x00,
    0x01, // one entry
    0x01,
    0x12,
    0x00,
    0x03,
    0x00,
    0x00,
    0x00,
    0x01,
    0x00,
    orientation,
    0x00,
    0x00, // Orientation SHORT
    0x00,
    0x00,
    0x00,
    0x00, // no next IFD
  ];
  const body = [..."Exif"].map((c) => c.charCodeAt(0)).concat([0, 0], tiff);
  const len = body.length + 2;
  const app1 = new Uint8Array([0xff, 0xe1, len >> 8, len & 0xff, ...body]);
  const out = new Uint8Array(jpeg.length + app1.length);
  out.set(jpeg.subarray(0, 2));
  out.set(app1, 2);
  out.set(jpeg.subarray(2), 2 + app1.length);
  return out;
}

describe("image headers", () => {
  it("reads dimensions of PNG, JPEG (with EXIF orientation), GIF, WebP and BMP without decoding", async () => {
    expect(imageInfo(await pngBytes(33, 17), "image/png")).toEqual({ width: 33, height: 17, orientation: 1 });
    const jpg = await jpegBytes(40, 10);
    expect(imageInfo(jpg, "image/jpeg")).toEqual({ width: 40, height: 10, orientation: 1 });
    expect(imageInfo(withExifOrientation(jpg, 6), "image/jpeg")).toEqual({
      width: 40,
      height: 10,
      orientation: 6,
    });
    const gif = new Uint8Array([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x2c, 0x01, 0xc8, 0x00]);
    expect(imageInfo(gif, "image/gif")).toEqual({ width: 300, height: 200, orientation: 1 });
    const vp8x = new Uint8Array(30);
    vp8x.set(
      [..."RIFF"].map((c) => c.charCodeAt(0)),
      0,
    );
    vp8x.set(
      [..."WEBPVP8X"].map((c) => c.charCodeAt(0)),
      8,
    );
    vp8x.set([0x1f, 0x03, 0x00, 0x57, 0x02, 0x00], 24); // 800 × 600, stored minus one
    expect(imageInfo(vp8x, "image/webp")).toEqual({ width: 800, height: 600, orientation: 1 });
    const bmp = new Uint8Array(26);
    bmp.set([0x42, 0x4d], 0);
    bmp.set([40, 0, 0, 0, 0x80, 0x02, 0, 0, 0x20, 0xfe, 0xff, 0xff], 14); // 640 × -480 (top-down)
    expect(imageInfo(bmp, "image/bmp")).toEqual({ width: 640, height: 480, orientation: 1 });
    expect(imageInfo(new Uint8Array([0xff, 0xd8, 0xff, 0xd9]), "image/jpeg")).toBeNull();
  });
});

describe("thumbnails", () => {
  it("fit within 200 × 200, keep the aspect ratio, never enlarge", () => {
    expect(fitWithin(4032, 3024)).toEqual({ width: 200, height: 150 });
    expect(fitWithin(300, 900)).toEqual({ width: 67, height: 200 });
    expect(fitWithin(50, 20)).toEqual({ width: 50, height: 20 });
    expect(fitWithin(10000, 1)).toEqual({ width: 200, height: 1 });
  });

  it("applies EXIF orientations to pixels (2 × 1 image, pixels A B)", () => {
    const A = [1, 1, 1, 1];
    const B = [2, 2, 2, 2];
    const px = new Uint8Array([...A, ...B]);
    const r = (o: number) => {
      const x = orientPixels(px, 2, 1, o);
      return [x.width, x.height, ...Array.from({ length: x.width * x.height }, (_, i) => x.px[i * 4])];
    };
    expect(r(1)).toEqual([2, 1, 1, 2]);
    expect(r(2)).toEqual([2, 1, 2, 1]);
    expect(r(3)).toEqual([2, 1, 2, 1]);
    expect(r(4)).toEqual([2, 1, 1, 2]);
    expect(r(5)).toEqual([1, 2, 1, 2]);
    expect(r(6)).toEqual([1, 2, 1, 2]); // rotated clockwise: A on top
    expect(r(7)).toEqual([1, 2, 2, 1]);
    expect(r(8)).toEqual([1, 2, 2, 1]); // rotated counter-clockwise: B on top
  });

  it("makes an upright thumbnail of a phone photo stored sideways (EXIF orientation 6)", async () => {
    const sideways = withExifOrientation(await jpegBytes(400, 100), 6);
    const out = await makeThumbnail(sideways, "image/jpeg");
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.thumbnail.contentType).toBe("image/jpeg");
    const { PhotonImage } = await import("@cf-wasm/photon");
    const img = PhotonImage.new_from_byteslice(out.thumbnail.bytes);
    expect([img.get_width(), img.get_height()]).toEqual([50, 200]);
    img.free();
  });

  it("skips what it cannot or should not decode", async () => {
    // A PNG header announcing 10000 × 10000 pixels (400 MB decoded) is refused before decoding.
    const huge = await pngBytes(4, 4);
    const view = new DataView(huge.buffer, huge.byteOffset);
    view.setUint32(16, 10000);
    view.setUint32(20, 10000);
    const r1 = await makeThumbnail(huge, "image/png");
    expect(r1).toMatchObject({ ok: false });
    expect(r1.ok ? "" : r1.reason).toMatch(/too large/);
    const broken = (await pngBytes(8, 8)).slice(0, 40);
    expect(await makeThumbnail(broken, "image/png")).toMatchObject({ ok: false });
    expect(await makeThumbnail(new Uint8Array([1, 2, 3]), "application/pdf")).toMatchObject({ ok: false });
    // A transparent PNG keeps PNG (alpha).
    const t = await makeThumbnail(await pngBytes(300, 300, 0), "image/png");
    expect(t.ok && t.thumbnail.contentType).toBe("image/png");
  });
});
