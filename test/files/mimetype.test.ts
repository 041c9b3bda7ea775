import { describe, expect, it } from "vitest";
import { detectMimetype } from "../../src/services/files/mimetype";
import { jpegBytes, pngBytes } from "./helpers";

const bytes = (...parts: (string | number[] | Uint8Array)[]) => {
  const out: number[] = [];
  for (const p of parts) {
    if (typeof p === "string") for (const c of p) out.push(c.charCodeAt(0));
    else out.push(...Array.from(p));
  }
  return new Uint8Array(out);
};
const zeros = (n: number) => new Array(n).fill(0);

/** A ZIP local file header for an entry `name` (stored), followed by `data`. */
const zipEntry = (name: string, data = "") =>
  bytes("PK", [3, 4], zeros(22), [name.length, 0, 0, 0], name, data);

describe("detectMimetype (magic numbers, not the declared type)", () => {
  it("recognizes real images made by the image library", async () => {
    expect(await detectMimetype(await pngBytes(4, 4))).toBe("image/png");
    expect(await detectMimetype(await jpegBytes(4, 4))).toBe("image/jpeg");
  });

  it.each([
    ["GIF89a", bytes("GIF89a", [1, 0, 1, 0])],
    ["GIF87a", bytes("GIF87a", [1, 0, 1, 0])],
  ])("gif %s", async (_n, b) => expect(await detectMimetype(b)).toBe("image/gif"));

  it("covers the common office and field formats", async () => {
    const cases: [Uint8Array, string][] = [
      [bytes("RIFF", zeros(4), "WEBPVP8 "), "image/webp"],
      [bytes("RIFF", zeros(4), "WAVEfmt "), "audio/wav"],
      [bytes("%PDF-1.7\n"), "application/pdf"],
      [bytes([0, 0, 0, 24], "ftypheic", zeros(4), "mif1heic"), "image/heic"],
      [bytes([0, 0, 0, 24], "ftypmif1", zeros(4), "mif1heic"), "image/heic"],
      [bytes([0, 0, 0, 20], "ftypavif", zeros(4), "avif"), "image/avif"],
      [bytes([0, 0, 0, 20], "ftypisom", zeros(4), "isom"), "video/mp4"],
      [bytes([0, 0, 0, 20], "ftypqt  ", zeros(4), "qt  "), "video/quicktime"],
      // A TIFF header with its first IFD (one ImageWidth entry): what a real file starts with.
      [
        bytes("II", [42, 0, 8, 0, 0, 0], [1, 0], [0, 1, 3, 0, 1, 0, 0, 0, 1, 0, 0, 0], zeros(68)),
        "image/tiff",
      ],
      [
        bytes("MM", [0, 42, 0, 0, 0, 8], [0, 1], [1, 0, 0, 3, 0, 0, 0, 1, 0, 1, 0, 0], zeros(68)),
        "image/tiff",
      ],
      [bytes("BM", zeros(4), zeros(4), [54, 0, 0, 0], [40, 0, 0, 0], zeros(12)), "image/bmp"],
      [zipEntry("[Content_Types].xml", "<Types/>"), "application/zip"],
      [
        bytes(zipEntry("[Content_Types].xml", "<Types/>"), zipEntry("word/document.xml")),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      ],
      [
        bytes(zipEntry("[Content_Types].xml"), zipEntry("xl/workbook.xml")),
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      ],
      [
        zipEntry("mimetype", "application/vnd.oasis.opendocument.textPK"),
        "application/vnd.oasis.opendocument.text",
      ],
      [zipEntry("notes.txt", "hello"), "application/zip"],
      [bytes([0x1f, 0x8b, 0x08, 0]), "application/gzip"],
      // An ID3v2 tag (10-byte header, empty) followed by an MPEG audio frame header.
      [bytes("ID3", [4, 0, 0, 0, 0, 0, 0], [0xff, 0xfb, 0x90, 0x00], zeros(400)), "audio/mpeg"],
      // An Ogg page (RFC 3533 §6) whose first packet is a Vorbis identification header.
      [bytes("OggS", [0, 2], zeros(20), [1, 30], [1], "vorbis", zeros(64)), "audio/ogg"],
      [bytes("{\\rtf1\\ansi"), "application/rtf"],
      [
        bytes('<?xml version="1.0"?>\n<!-- made by hand -->\n<svg xmlns="http://www.w3.org/2000/svg"/>'),
        "image/svg+xml",
      ],
      [bytes("  <svg width='1'></svg>"), "image/svg+xml"],
      [bytes("<!DOCTYPE html><html></html>"), "text/html"],
      [new TextEncoder().encode("Päikest! Delivery notes, ✓ signed\r\n"), "text/plain"],
      [bytes([0xff, 0xfe], "h", [0], "i", [0]), "text/plain"],
      [bytes([0, 1, 2, 3, 4, 5]), "application/octet-stream"],
      [new Uint8Array(0), "application/octet-stream"],
    ];
    for (const [b, type] of cases)
      expect([String.fromCharCode(...b.subarray(0, 12)), await detectMimetype(b)]).toEqual([
        String.fromCharCode(...b.subarray(0, 12)),
        type,
      ]);
  });

  it("treats UTF-8 cut inside a character at the end of the sample as text", async () => {
    const b = new TextEncoder().encode("aaa€");
    expect(await detectMimetype(b.subarray(0, b.length - 1))).toBe("text/plain");
    expect(await detectMimetype(bytes([0xc3, 0x28, 0x41]))).toBe("application/octet-stream");
  });
});
