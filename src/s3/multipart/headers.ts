/** Header parameters of a part and of the request's Content-Type. */

import { utf8Decoder } from "./bytes";
import { MultipartError, malformed } from "./types";

// ------------------------------------------------------------------------------------------
// Header parameters (RFC 9110 §5.6.6 parameters, RFC 2045 §5.1 / RFC 2183 §2 for
// Content-Disposition).
// ------------------------------------------------------------------------------------------

export interface ParsedHeaderValue {
  /** The value before the first ';', trimmed and lowercased (media type or disposition type). */
  value: string;
  /** Parameters by lowercased name (parameter names are case-insensitive); first one wins. */
  params: Map<string, string>;
}

/**
 * Parse `type; name=value; name="quoted value"`. Quoted strings accept `\"` and `\\` as
 * quoted-pairs (what RFC 9110 §5.6.4 senders such as Go's mime/multipart write) but keep any
 * other backslash literally, because browsers do not escape backslashes in file names
 * (WHATWG HTML "multipart/form-data encoding algorithm": only CR, LF and `"` are
 * percent-escaped), and S3 documents Windows paths like `C:\Program Files\file.txt` there.
 */
export function parseHeaderValue(header: string): ParsedHeaderValue {
  const params = new Map<string, string>();
  let i = header.indexOf(";");
  const value = (i < 0 ? header : header.slice(0, i)).trim().toLowerCase();
  if (i < 0) return { value, params };
  const n = header.length;
  while (i < n) {
    // at ';'
    i++;
    while (i < n && (header[i] === " " || header[i] === "\t")) i++;
    let nameStart = i;
    while (i < n && header[i] !== "=" && header[i] !== ";") i++;
    const name = header.slice(nameStart, i).trim().toLowerCase();
    if (i >= n || header[i] === ";") continue; // a parameter without a value: ignored
    i++; // '='
    while (i < n && (header[i] === " " || header[i] === "\t")) i++;
    let val = "";
    if (header[i] === '"') {
      i++;
      let closed = false;
      while (i < n) {
        const c = header[i];
        if (c === "\\" && i + 1 < n && (header[i + 1] === '"' || header[i + 1] === "\\")) {
          val += header[i + 1];
          i += 2;
          continue;
        }
        if (c === '"') {
          closed = true;
          i++;
          break;
        }
        val += c;
        i++;
      }
      if (!closed) throw malformed("unterminated quoted-string in a header parameter");
      while (i < n && header[i] !== ";") i++; // anything between the closing quote and ';' is junk
    } else {
      nameStart = i;
      while (i < n && header[i] !== ";") i++;
      val = header.slice(nameStart, i).trim();
    }
    if (name && !params.has(name)) params.set(name, val);
  }
  return { value, params };
}

/**
 * The boundary of a `multipart/form-data` Content-Type. Throws `not-multipart` for another
 * media type (S3 answers 412) and `malformed` for a missing or invalid boundary (S3: 400
 * MalformedPOSTRequest). RFC 2046 §5.1.1: 1 to 70 characters, not ending with a space.
 */
export function parseBoundary(contentType: string | null | undefined): string {
  if (!contentType) throw new MultipartError("not-multipart", "Content-Type is not multipart/form-data");
  const { value, params } = parseHeaderValue(contentType);
  if (value !== "multipart/form-data") {
    throw new MultipartError("not-multipart", "Content-Type is not multipart/form-data");
  }
  const boundary = params.get("boundary");
  if (boundary === undefined || boundary.length === 0) throw malformed("no boundary parameter");
  if (boundary.length > 70 || boundary.endsWith(" ") || !/^[\x20-\x7e]+$/.test(boundary)) {
    throw malformed("invalid boundary parameter");
  }
  return boundary;
}

export interface PartHeaders {
  disposition: string;
  name: string;
  filename: string | null;
  contentType: string | null;
}

export function parsePartHeaders(block: Uint8Array): PartHeaders {
  // RFC 2046: headers are US-ASCII; browsers send UTF-8 names and file names raw, so decode
  // as UTF-8 (RFC 7578 §5.1.3 notes the deployed practice).
  const text = utf8Decoder.decode(block);
  const headers = new Map<string, string>();
  let lastName: string | null = null;
  for (const line of text.split("\r\n")) {
    if (line.length === 0) continue;
    if ((line[0] === " " || line[0] === "\t") && lastName) {
      headers.set(lastName, `${headers.get(lastName)} ${line.trim()}`); // obsolete line folding
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) throw malformed("a part header line without a name");
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
    lastName = name;
  }
  const cd = headers.get("content-disposition");
  // RFC 7578 §4.2: "Each part MUST contain a Content-Disposition header field ... [with] a
  // "name" parameter".
  if (cd === undefined) throw malformed("a part without Content-Disposition");
  const { value, params } = parseHeaderValue(cd);
  const name = params.get("name");
  if (name === undefined) throw malformed("a part without a name");
  return {
    disposition: value,
    name,
    // RFC 7578 §4.2: `filename*` (RFC 5987) "MUST NOT be used", so it is not read.
    filename: params.has("filename") ? params.get("filename")! : null,
    contentType: headers.get("content-type") ?? null,
  };
}
