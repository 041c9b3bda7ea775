import { getDocumentProxy } from "unpdf";
import { expect } from "vitest";

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

/** One run of text as a PDF reader extracts it, with its place on the page (PDF user space, y up). */
export type PdfTextItem = { str: string; x: number; baseline: number; width: number; size: number };
export type PdfPage = { text: string; items: PdfTextItem[] };

/**
 * The text of each page as a PDF reader sees it: pdf.js (unpdf's serverless build, which runs in
 * workerd) maps the glyphs back to characters through the fonts' ToUnicode CMaps (ISO 32000-1
 * §9.10), so this is what a recipient can search and copy, not what we meant to write.
 */
export async function pdfPages(bytes: Uint8Array): Promise<PdfPage[]> {
  const doc = await getDocumentProxy(new Uint8Array(bytes));
  const pages: PdfPage[] = [];
  for (let i = 1; i <= doc.numPages; i++) {
    const content = await (await doc.getPage(i)).getTextContent();
    const items = content.items
      .filter((it): it is Extract<typeof it, { str: string }> => "str" in it && it.str.trim() !== "")
      .map((it) => ({
        str: it.str,
        x: it.transform[4],
        baseline: it.transform[5],
        width: it.width,
        // Text is never scaled or rotated here, so the matrix's d is the font size.
        size: it.transform[3],
      }));
    pages.push({ text: items.map((it) => it.str).join("\n"), items });
  }
  await doc.destroy();
  return pages;
}

/**
 * Noto Sans's ascent and descent (its hhea table: 1069 and 293 per 1000 units): the vertical
 * extent of any of its glyphs, accents included, around the baseline.
 */
const ASCENT = 1.069;
const DESCENT = 0.293;

/** Asserts that no two text runs of a page overlap: every glyph box is apart from every other. */
export function expectNoOverlap(page: PdfPage, where = "") {
  const boxes = page.items.map((it) => ({
    it,
    x0: it.x,
    x1: it.x + it.width,
    y0: it.baseline - DESCENT * it.size,
    y1: it.baseline + ASCENT * it.size,
  }));
  // 0.01 pt of tolerance: lines that touch (one's descent on the next one's ascent) are apart.
  const eps = 0.01;
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i];
      const b = boxes[j];
      const overlap = a.x0 < b.x1 - eps && b.x0 < a.x1 - eps && a.y0 < b.y1 - eps && b.y0 < a.y1 - eps;
      expect(overlap, `${where} "${a.it.str}" overlaps "${b.it.str}"`).toBe(false);
    }
  }
}
