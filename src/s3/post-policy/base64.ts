/** The policy's encoding: "UTF-8 and base64" (S3 "Creating a POST Policy"). */
const utf8 = new TextEncoder();

/** Standard base64 of the UTF-8 bytes of `text` (the policy's encoding: "UTF-8 and base64"). */
export function base64EncodeUtf8(text: string): string {
  const bytes = utf8.encode(text);
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

/** Decode base64 to bytes; null when it is not base64. */
export function base64Decode(text: string): Uint8Array | null {
  try {
    const bin = atob(text);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}
