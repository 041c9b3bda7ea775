/**
 * What the PDFs share: a document with an embedded Unicode font, and the drawing of the layout
 * engine's boxes (layout.ts) onto its pages.
 *
 * PDF's standard 14 fonts are not embedded and encode WinAnsi only (ISO 32000-1 §9.6.2.2,
 * Annex D), so Polish, Baltic and Cyrillic letters could not be written with them. Noto Sans is
 * embedded instead, as a Type 0 font with Identity-H encoding and a ToUnicode CMap (ISO
 * 32000-1 §9.7, §9.10.3: pdf-lib writes both), subset to the glyphs the document uses
 * (§9.6.4): a report of a few pages carries tens of kilobytes of font, not 630. With the
 * ToUnicode map, text can be searched, copied and read back by any PDF reader.
 *
 * Pure: the font files come in as bytes (src/services/documents/fonts.ts reads them).
 */
import { PDFDocument, type PDFFont, type PDFImage, type PDFPage, rgb } from "@cantoo/pdf-lib";
import type { Box, FigureBox, Metrics, PageSpec, Rgb, Weight } from "./layout";

export type FontFiles = { regular: Uint8Array; bold: Uint8Array };

/** Common symbols Noto Sans has no glyph for, written with the characters it has. */
const SUBSTITUTES: Record<string, string> = {
  "→": "->",
  "←": "<-",
  "↔": "<->",
  "⇒": "=>",
  "✓": "v",
  "✔": "v",
  "✗": "x",
  "✘": "x",
  "★": "*",
  "●": "•",
  "■": "•",
};

export type Pdf = {
  doc: PDFDocument;
  fonts: Record<Weight, PDFFont>;
  metrics: Metrics;
};

export async function createPdf(files: FontFiles, meta: { title: string; language: string }): Promise<Pdf> {
  const doc = await PDFDocument.create();
  // Imported on first use: fontkit builds its Unicode tables when loaded, which would add
  // about 200 ms of CPU to every isolate's start-up (`npm run check:bundle`: 343 ms instead of 124)
  // for the requests that draw no PDF.
  doc.registerFontkit((await import("@cantoo/fontkit")).default);
  doc.setTitle(meta.title);
  // The document's natural language (ISO 32000-1 §14.9.2.1), for screen readers and hyphenation.
  doc.setLanguage(meta.language);
  doc.setCreator("field-dispatch");
  const regular = await doc.embedFont(files.regular, { subset: true });
  const bold = await doc.embedFont(files.bold, { subset: true });
  const fonts = { regular, bold };
  const known = new Set(regular.getCharacterSet());
  const ascent = regular.heightAtSize(1, { descender: false });
  const metrics: Metrics = {
    width: (text, size, weight) => fonts[weight].widthOfTextAtSize(text, size),
    ascent,
    descent: regular.heightAtSize(1) - ascent,
    // Control characters become spaces; a character the font has no glyph for becomes "?", as a
    // visible mark, rather than the font's empty .notdef box.
    normalize: (text) =>
      Array.from(text, (ch) => {
        const cp = ch.codePointAt(0)!;
        if (ch === "\n" || ch === "\r") return ch;
        if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return " ";
        return known.has(cp) ? ch : (SUBSTITUTES[ch] ?? "?");
      }).join(""),
  };
  return { doc, fonts, metrics };
}

export const pdfColor = (c: readonly [number, number, number]) => rgb(c[0], c[1], c[2]);

/** `#rrggbb` as red, green and blue from 0 to 1 (the layout engine's colours). */
export const hexRgb = (hex: string): Rgb =>
  [1, 3, 5].map((k) => Number.parseInt(hex.slice(k, k + 2), 16) / 255) as unknown as Rgb;

/** `#rrggbb` as a pdf-lib colour. */
export const hexColor = (hex: string) => pdfColor(hexRgb(hex));

/**
 * Adds one page per list of boxes and draws them. Layout coordinates are top-down; PDF user
 * space is bottom-up (ISO 32000-1 §8.3.2.3), so every y is turned over here and only here.
 */
export function drawPages<F>(
  pdf: Pdf,
  spec: PageSpec,
  pages: Box<F>[][],
  images: PDFImage[],
  drawFigure: (page: PDFPage, box: FigureBox<F>, flipY: (y: number) => number) => void,
) {
  const flipY = (y: number) => spec.height - y;
  for (const boxes of pages) {
    const page = pdf.doc.addPage([spec.width, spec.height]);
    for (const b of boxes) {
      if (b.kind === "text") {
        page.drawText(b.text, {
          x: b.x,
          y: flipY(b.baseline),
          size: b.size,
          font: pdf.fonts[b.weight],
          color: pdfColor(b.color),
        });
      } else if (b.kind === "rule") {
        page.drawLine({
          start: { x: b.x, y: flipY(b.y) },
          end: { x: b.x + b.width, y: flipY(b.y) },
          thickness: 0.5,
          color: pdfColor(b.color),
        });
      } else if (b.kind === "image") {
        page.drawImage(images[b.ref], { x: b.x, y: flipY(b.y + b.height), width: b.width, height: b.height });
      } else {
        drawFigure(page, b, flipY);
      }
    }
  }
}
