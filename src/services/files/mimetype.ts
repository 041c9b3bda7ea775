/**
 * The media type of a file from its first bytes (contract §8: "detected from the file's
 * bytes, not trusted from the client"). Signatures as in the WHATWG MIME Sniffing Standard
 * (§6.1 image patterns, §6.2 audio/video, §7.1 archive/PDF patterns) and the formats' own
 * specifications where that standard is silent (ISO BMFF `ftyp` brands for HEIC/AVIF/MP4,
 * ECMA-376 part 2 for Office Open XML, OASIS ODF 1.2 part 3 §3.3 for OpenDocument).
 *
 * `SNIFF_BYTES` is how much of the file is read: enough for every magic number here and for
 * the first local-file headers of a ZIP, where OOXML names its parts.
 */
export const SNIFF_BYTES = 8192;

const ascii = (bytes: Uint8Array, from: number, to: number) =>
  String.fromCharCode(...bytes.subarray(from, Math.min(to, bytes.length)));

function startsWith(bytes: Uint8Array, sig: number[], at = 0): boolean {
  if (bytes.length < at + sig.length) return false;
  for (let i = 0; i < sig.length; i++) if (bytes[at + i] !== sig[i]) return false;
  return true;
}

function startsWithText(bytes: Uint8Array, text: string, at = 0): boolean {
  return ascii(bytes, at, at + text.length) === text;
}

/** ISO BMFF (`....ftyp<brand>`): HEIF/HEIC, AVIF, MP4, QuickTime, M4A. */
function isoBmff(bytes: Uint8Array): string | null {
  if (bytes.length < 12 || !startsWithText(bytes, "ftyp", 4)) return null;
  const boxSize = (bytes[0] << 24) | (bytes[1] << 16) | (bytes[2] << 8) | bytes[3];
  const brands = [ascii(bytes, 8, 12)];
  // Compatible brands follow the minor version, up to the end of the ftyp box.
  for (let at = 16; at + 4 <= Math.min(boxSize, bytes.length); at += 4) brands.push(ascii(bytes, at, at + 4));
  const has = (...b: string[]) => brands.some((x) => b.includes(x));
  const major = brands[0];
  if (["heic", "heix", "heim", "heis"].includes(major)) return "image/heic";
  if (["hevc", "hevx"].includes(major)) return "image/heic-sequence";
  if (major === "avif" || major === "avis") return "image/avif";
  if (["mif1", "msf1"].includes(major))
    return has("avif") ? "image/avif" : has("heic") ? "image/heic" : "image/heif";
  if (major === "qt  ") return "video/quicktime";
  if (["M4A ", "M4B "].includes(major)) return "audio/mp4";
  return "video/mp4";
}

/** Office Open XML and OpenDocument are ZIPs; their parts' names say which. */
function zipFlavour(bytes: Uint8Array): string {
  // ODF: the first entry is an uncompressed `mimetype` file holding the type (at offset 38).
  if (startsWithText(bytes, "mimetype", 30)) {
    const m = /^application\/vnd\.oasis\.opendocument\.[a-z.-]+/.exec(ascii(bytes, 38, 38 + 80));
    if (m) return m[0];
  }
  const names = ascii(bytes, 0, bytes.length);
  if (names.includes("[Content_Types].xml") || /(word|xl|ppt)\//.test(names)) {
    if (names.includes("word/"))
      return "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
    if (names.includes("xl/")) return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
    if (names.includes("ppt/"))
      return "application/vnd.openxmlformats-officedocument.presentationml.presentation";
  }
  return "application/zip";
}

/** Text that is an SVG document: optional BOM, XML declaration, comments, doctype, then `<svg`. */
function looksLikeSvg(text: string): boolean {
  const t = text
    .replace(/^\uFEFF/, "")
    .replace(/<\?xml[\s\S]*?\?>/g, "")
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/<!DOCTYPE[^>]*>/gi, "")
    .trimStart();
  return /^<svg[\s>]/i.test(t);
}

function looksLikeHtml(text: string): boolean {
  const t = text
    .replace(/^\uFEFF/, "")
    .trimStart()
    .slice(0, 64)
    .toLowerCase();
  return t.startsWith("<!doctype html") || t.startsWith("<html");
}

/**
 * Whether the sample is text: decodes as UTF-8 (a multi-byte sequence cut at the end of the
 * sample is allowed) and has no control bytes other than TAB, LF, FF, CR and ESC (WHATWG MIME
 * Sniffing §7.2's "binary data byte" set).
 */
function isText(bytes: Uint8Array): string | null {
  for (const b of bytes) {
    if (b <= 0x08 || b === 0x0b || (b >= 0x0e && b <= 0x1a) || (b >= 0x1c && b <= 0x1f)) return null;
  }
  // Drop a possibly truncated trailing sequence before decoding strictly.
  let end = bytes.length;
  for (let i = Math.max(0, bytes.length - 3); i < bytes.length; i++) {
    const b = bytes[i];
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    if (need > 1 && i + need > bytes.length) {
      end = i;
      break;
    }
  }
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes.subarray(0, end));
  } catch {
    return null;
  }
}

/** The media type of a file whose first bytes (up to SNIFF_BYTES) are `bytes`. */
export function detectMimetype(bytes: Uint8Array): string {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (startsWithText(bytes, "GIF87a") || startsWithText(bytes, "GIF89a")) return "image/gif";
  if (startsWithText(bytes, "RIFF") && startsWithText(bytes, "WEBPVP", 8)) return "image/webp";
  if (startsWithText(bytes, "RIFF") && startsWithText(bytes, "WAVE", 8)) return "audio/wav";
  if (startsWithText(bytes, "RIFF") && startsWithText(bytes, "AVI ", 8)) return "video/x-msvideo";
  if (startsWithText(bytes, "BM") && bytes.length >= 26 && startsWith(bytes, [0, 0, 0, 0], 6))
    return "image/bmp";
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a]))
    return "image/tiff";
  if (startsWith(bytes, [0x00, 0x00, 0x01, 0x00]) && bytes.length >= 6 && bytes[4] + bytes[5] > 0)
    return "image/x-icon";
  const bmff = isoBmff(bytes);
  if (bmff) return bmff;
  if (startsWithText(bytes, "%PDF-")) return "application/pdf";
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04])) return zipFlavour(bytes);
  if (startsWith(bytes, [0x50, 0x4b, 0x05, 0x06])) return "application/zip"; // empty archive
  if (startsWith(bytes, [0x1f, 0x8b, 0x08])) return "application/gzip";
  if (startsWith(bytes, [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07])) return "application/vnd.rar";
  if (startsWith(bytes, [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c])) return "application/x-7z-compressed";
  if (startsWith(bytes, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return "application/x-ole-storage";
  // MP3 with an ID3 tag; a bare MPEG frame sync (0xFFEx) is too weak a signature to trust.
  if (startsWithText(bytes, "ID3")) return "audio/mpeg";
  if (startsWithText(bytes, "OggS")) return "application/ogg";
  if (startsWithText(bytes, "fLaC")) return "audio/flac";
  if (startsWith(bytes, [0x1a, 0x45, 0xdf, 0xa3])) return "video/webm";
  if (startsWithText(bytes, "{\\rtf")) return "application/rtf";
  if (bytes.length === 0) return "application/octet-stream";
  // UTF-16 text announces itself with its byte order mark (WHATWG MIME Sniffing §7.1).
  if (startsWith(bytes, [0xfe, 0xff]) || startsWith(bytes, [0xff, 0xfe])) return "text/plain";
  const text = isText(bytes);
  if (text !== null) {
    if (looksLikeSvg(text)) return "image/svg+xml";
    if (looksLikeHtml(text)) return "text/html";
    return "text/plain";
  }
  return "application/octet-stream";
}

/** Types the thumbnailer can decode (photon's image codecs); others get `thumbnail: null`. */
export const THUMBNAIL_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"]);
