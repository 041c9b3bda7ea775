/** Every stream of a PDF, inflated when it is FlateDecode (ISO 32000-1 §7.4.4), as latin1 text. */
export async function pdfText(bytes: Uint8Array): Promise<string> {
  const raw = new TextDecoder("latin1").decode(bytes);
  let out = raw;
  for (const m of raw.matchAll(/stream\r?\n/g)) {
    const start = m.index! + m[0].length;
    let end = raw.indexOf("endstream", start);
    // The EOL before `endstream` is not part of the data (§7.3.8.1).
    while (end > start && (raw[end - 1] === "\n" || raw[end - 1] === "\r")) end--;
    if (!/FlateDecode/.test(raw.slice(raw.lastIndexOf("<<", m.index), m.index))) continue;
    const inflated = await new Response(
      new Blob([bytes.slice(start, end)]).stream().pipeThrough(new DecompressionStream("deflate")),
    )
      .arrayBuffer()
      .catch(() => new ArrayBuffer(0));
    out += new TextDecoder("latin1").decode(inflated);
  }
  return out;
}

/** Text as the standard fonts' hex strings in a content stream (`<48656C6C6F> Tj`). */
export const pdfHex = (s: string) =>
  [...new TextEncoder().encode(s)].map((b) => b.toString(16).toUpperCase().padStart(2, "0")).join("");
