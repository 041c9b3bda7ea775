import { fileTypeFromBuffer } from "file-type/core";

/**
 * The media type of a file from its first bytes (contract §8: "detected from the file's
 * bytes, not trusted from the client"). Binary formats are recognized by the `file-type`
 * library (magic numbers of ~200 formats, maintained upstream); what it leaves open is
 * decided here as the WHATWG MIME Sniffing Standard does: text (UTF-8, or UTF-16 with a BOM),
 * SVG and HTML among text, else `application/octet-stream`. A few of its names are mapped to
 * the IANA-registered ones clients already see from this service.
 *
 * `SNIFF_BYTES` is how much of the file is read: enough for every magic number and for the
 * first local-file headers of a ZIP, where Office Open XML and OpenDocument name their parts.
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

/** file-type's names where the registered (or already published) name differs. */
const CANONICAL: Record<string, string> = {
  "audio/x-wav": "audio/wav",
  "audio/vnd.wave": "audio/wav",
  "video/vnd.avi": "video/x-msvideo",
  "application/x-rar-compressed": "application/vnd.rar",
  "application/x-cfb": "application/x-ole-storage",
  "audio/x-flac": "audio/flac",
  "application/x-gzip": "application/gzip",
};

/** The media type of a file whose first bytes (up to SNIFF_BYTES) are `bytes`. */
export async function detectMimetype(bytes: Uint8Array): Promise<string> {
  if (bytes.length === 0) return "application/octet-stream";
  // UTF-16 text announces itself with its byte order mark (WHATWG MIME Sniffing §7.1); checked
  // first because FF FE also reads as a (weak) MPEG audio frame sync.
  if (startsWith(bytes, [0xfe, 0xff]) || startsWith(bytes, [0xff, 0xfe])) return "text/plain";
  const found = await fileTypeFromBuffer(bytes).catch(() => undefined);
  if (found) {
    const mime = CANONICAL[found.mime] ?? found.mime;
    // file-type names a ZIP whose parts lie past the sample `application/zip`; the part names
    // in the first local headers still tell Office Open XML and OpenDocument apart.
    if (mime === "application/zip") return zipFlavour(bytes);
    // An XML declaration is all file-type looks at; an SVG document is more than XML.
    if (mime === "application/xml") {
      const text = isText(bytes);
      return text !== null && looksLikeSvg(text) ? "image/svg+xml" : mime;
    }
    // A generic HEIF (`mif1`) whose compatible brands list `heic` holds HEVC images: a HEIC
    // photo, as phones name it (ISO/IEC 23008-12 Annex B brands).
    if (mime === "image/heif" && ascii(bytes, 16, 64).includes("heic")) return "image/heic";
    return mime;
  }
  const text = isText(bytes);
  if (text !== null) {
    if (looksLikeSvg(text)) return "image/svg+xml";
    if (looksLikeHtml(text)) return "text/html";
    if (text.startsWith("{\\rtf")) return "application/rtf";
    return "text/plain";
  }
  return "application/octet-stream";
}

/** Types the thumbnailer can decode (photon's image codecs); others get `thumbnail: null`. */
export const THUMBNAIL_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"]);
