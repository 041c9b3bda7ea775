/**
 * A small layout engine for the PDFs (proof of delivery, route report): blocks in (headings,
 * paragraphs, tables, image grids, figures), positioned boxes out, one list per page. Pure: text
 * is measured by the `Metrics` it is given (the embedded font's advance widths in the PDFs, a
 * fixed width in unit tests), so the boxes can be checked without drawing anything.
 *
 * Coordinates are PDF points with the origin at the page's top-left corner and y growing down;
 * the drawer turns them into PDF user space (ISO 32000-1 §8.3.2.3: origin bottom-left, y up).
 * A text box is one line: from its top, `height` is the line's ascent + descent of the font, so
 * two lines that do not overlap as boxes cannot overlap as glyphs either.
 *
 * Rules: words wrap at the available width, a word longer than a whole line is broken between
 * characters; a block that does not fit goes to the next page; a table row never straddles
 * a page unless it is taller than a page, and a table's header row is repeated at the top of each
 * page it continues on; a heading is kept with what follows it.
 */

export type Weight = "regular" | "bold";
export type Rgb = readonly [number, number, number];

export interface Metrics {
  /** The advance width of `text` at `size` points. */
  width(text: string, size: number, weight: Weight): number;
  /** Ascent and descent below the baseline, as fractions of the font size (both positive). */
  ascent: number;
  descent: number;
  /** Applied to every string before it is measured: e.g. characters the font lacks made visible. */
  normalize?(text: string): string;
}

export type PageSpec = { width: number; height: number; margin: number };
export const A4: PageSpec = { width: 595.28, height: 841.89, margin: 48 };

/** One paragraph of a table cell, with its own style. */
export type Para = { text: string; weight?: Weight; color?: Rgb; size?: number };
export type Cell = string | Para[];
/**
 * A column's width: points, "fill" (shares what the others leave), or "auto" (as wide as its
 * widest header or cell paragraph unwrapped, at most a quarter of the page's width).
 */
export type Column = { width: number | "fill" | "auto"; align?: "left" | "right" };

export type Block<F = unknown> =
  | {
      kind: "text";
      text: string;
      size: number;
      weight?: Weight;
      color?: Rgb;
      /** Space above and below, in points. */
      before?: number;
      after?: number;
      /** A heading: it goes to the next page with the first line, row or image of what follows. */
      keepWithNext?: boolean;
    }
  | {
      kind: "table";
      size: number;
      columns: Column[];
      header?: Cell[];
      rows: Cell[][];
      /** A hairline under each row. */
      rules?: boolean;
      before?: number;
      after?: number;
    }
  | {
      kind: "images";
      /** The side of the square each image is fitted into. */
      cell: number;
      size: number;
      items: { ref: number; width: number; height: number; caption: string }[];
      before?: number;
      after?: number;
    }
  | { kind: "figure"; width: number; height: number; figure: F; before?: number; after?: number };

export type TextBox = {
  kind: "text";
  x: number;
  y: number;
  width: number;
  height: number;
  /** The baseline's y (top-down). */
  baseline: number;
  text: string;
  size: number;
  weight: Weight;
  color: Rgb;
};
export type RuleBox = { kind: "rule"; x: number; y: number; width: number; color: Rgb };
export type ImageBox = { kind: "image"; x: number; y: number; width: number; height: number; ref: number };
export type FigureBox<F> = { kind: "figure"; x: number; y: number; width: number; height: number; figure: F };
export type Box<F = unknown> = TextBox | RuleBox | ImageBox | FigureBox<F>;

const INK: Rgb = [0.13, 0.13, 0.13];
const HAIRLINE: Rgb = [0.82, 0.82, 0.82];
const CELL_PAD_X = 4;
const CELL_PAD_Y = 3;
const IMAGE_GAP = 12;
/** At most this many caption lines under an image; the last one ends with an ellipsis. */
const CAPTION_LINES = 3;

const lineHeight = (m: Metrics, size: number) => (m.ascent + m.descent) * size;

/**
 * `text` as lines no wider than `width`: greedy word wrapping (whitespace runs collapse to one
 * space; a line break in the text starts a new line), and a word wider than `width` broken
 * between characters. Always at least one line.
 */
export function wrap(text: string, width: number, size: number, weight: Weight, m: Metrics): string[] {
  const clean = m.normalize ? m.normalize(text) : text;
  const fits = (s: string) => m.width(s, size, weight) <= width;
  const lines: string[] = [];
  for (const paragraph of clean.split(/\r\n|\r|\n/)) {
    const words = paragraph.split(/\s+/).filter(Boolean);
    let line = "";
    for (const word of words) {
      const candidate = line ? `${line} ${word}` : word;
      if (fits(candidate)) {
        line = candidate;
        continue;
      }
      if (line) lines.push(line);
      line = "";
      if (fits(word)) {
        line = word;
        continue;
      }
      // A word wider than the line: as many characters (code points) as fit, line after line.
      for (const ch of Array.from(word)) {
        if (line && !fits(line + ch)) {
          lines.push(line);
          line = "";
        }
        line += ch;
      }
    }
    lines.push(line);
  }
  return lines;
}

/** Keeps the first `max` lines; the last kept one ends with "…" when some were dropped. */
function clip(lines: string[], max: number, width: number, size: number, weight: Weight, m: Metrics) {
  if (lines.length <= max) return lines;
  const kept = lines.slice(0, max);
  let last = kept[max - 1];
  while (last && m.width(`${last}…`, size, weight) > width) last = Array.from(last).slice(0, -1).join("");
  kept[max - 1] = `${last}…`;
  return kept;
}

const paras = (cell: Cell): Para[] => (typeof cell === "string" ? [{ text: cell }] : cell);

type CellLine = { text: string; size: number; weight: Weight; color: Rgb };

export function layout<F>(blocks: Block<F>[], spec: PageSpec, m: Metrics): Box<F>[][] {
  const pages: Box<F>[][] = [[]];
  const left = spec.margin;
  const right = spec.width - spec.margin;
  const bottom = spec.height - spec.margin;
  const contentWidth = right - left;
  let y = spec.margin;
  const page = () => pages[pages.length - 1];
  /** The last heading's boxes while nothing of the block after it is placed. */
  type Keep = { boxes: Box<F>[]; top: number; end: number };
  let keep: Keep | null = null;
  const newPage = () => {
    const last = page();
    const carry =
      keep &&
      last.length > keep.boxes.length &&
      keep.boxes.every((b, i) => last[last.length - keep!.boxes.length + i] === b)
        ? keep
        : null;
    pages.push([]);
    y = spec.margin;
    if (carry) {
      // The heading moves down with what it heads: same boxes, shifted to the new page's top.
      last.splice(last.length - carry.boxes.length);
      const shift = spec.margin - carry.top;
      for (const b of carry.boxes) {
        b.y += shift;
        if (b.kind === "text") b.baseline += shift;
        page().push(b);
      }
      y = spec.margin + (carry.end - carry.top);
      carry.end = y;
      carry.top = spec.margin;
    }
    keep = null;
  };
  const atTop = () => y === spec.margin;
  /** Starts a new page unless `h` more points fit on this one (or it is empty: then nothing will). */
  const need = (h: number) => {
    if (y + h > bottom && !atTop()) newPage();
  };
  const textBox = (x: number, top: number, line: CellLine): TextBox => ({
    kind: "text",
    x,
    y: top,
    width: m.width(line.text, line.size, line.weight),
    height: lineHeight(m, line.size),
    baseline: top + m.ascent * line.size,
    text: line.text,
    size: line.size,
    weight: line.weight,
    color: line.color,
  });

  for (const block of blocks) {
    if (block.kind === "text") {
      const weight = block.weight ?? "regular";
      const lh = lineHeight(m, block.size);
      const lines = wrap(block.text, contentWidth, block.size, weight, m);
      if (!atTop()) y += block.before ?? 0;
      // A heading right under another (a title and its subtitle) is kept with it and what follows.
      const prev = keep as Keep | null;
      need(lh * lines.length);
      keep = null;
      const placed: Box<F>[] = [];
      const top = y;
      for (const text of lines) {
        need(lh);
        const box = textBox(left, y, { text, size: block.size, weight, color: block.color ?? INK });
        page().push(box);
        placed.push(box);
        y += lh;
      }
      y += block.after ?? 0;
      // Only a heading that fits on one page is carried (a longer one was already broken).
      if (block.keepWithNext && placed.every((b) => b.y >= top)) {
        const last = page();
        const before = prev?.boxes ?? [];
        const follows =
          prev !== null &&
          before.every((b, i) => last[last.length - placed.length - before.length + i] === b);
        keep =
          prev && follows
            ? { boxes: [...before, ...placed], top: prev.top, end: y }
            : { boxes: placed, top, end: y };
      }
      continue;
    } else if (block.kind === "table") {
      if (!atTop()) y += block.before ?? 0;
      tableLayout(block);
      y += block.after ?? 0;
    } else if (block.kind === "images") {
      if (!atTop()) y += block.before ?? 0;
      const lh = lineHeight(m, block.size);
      const perRow = Math.max(1, Math.floor((contentWidth + IMAGE_GAP) / (block.cell + IMAGE_GAP)));
      for (let i = 0; i < block.items.length; i += perRow) {
        const row = block.items.slice(i, i + perRow).map((item) => ({
          item,
          caption: clip(
            wrap(item.caption, block.cell, block.size, "regular", m),
            CAPTION_LINES,
            block.cell,
            block.size,
            "regular",
            m,
          ),
        }));
        const captionHeight = Math.max(...row.map((r) => r.caption.length)) * lh;
        need(block.cell + 4 + captionHeight);
        row.forEach(({ item, caption }, j) => {
          const x = left + j * (block.cell + IMAGE_GAP);
          const scale = Math.min(block.cell / item.width, block.cell / item.height, 1);
          const w = item.width * scale;
          const h = item.height * scale;
          // Bottom-aligned in its square, so the captions of a row line up.
          page().push({ kind: "image", x, y: y + block.cell - h, width: w, height: h, ref: item.ref });
          caption.forEach((text, k) => {
            page().push(
              textBox(x, y + block.cell + 4 + k * lh, {
                text,
                size: block.size,
                weight: "regular",
                color: INK,
              }),
            );
          });
        });
        y += block.cell + 4 + captionHeight + IMAGE_GAP;
      }
      y += block.after ?? 0;
    } else {
      if (!atTop()) y += block.before ?? 0;
      need(block.height);
      page().push({
        kind: "figure",
        x: left,
        y,
        width: block.width,
        height: block.height,
        figure: block.figure,
      });
      y += block.height + (block.after ?? 0);
    }
    keep = null;
  }
  return pages;

  function tableLayout(t: Extract<Block<F>, { kind: "table" }>) {
    const natural = (i: number) =>
      Math.min(
        contentWidth / 4,
        // 1 pt more than the text: sums of advance widths differ in the last bits when re-measured.
        2 * CELL_PAD_X +
          1 +
          Math.max(
            0,
            ...[...(t.header ? [t.header] : []), ...t.rows].flatMap((row, r) =>
              paras(row[i] ?? "").map((p) =>
                m.width(
                  m.normalize ? m.normalize(p.text) : p.text,
                  p.size ?? t.size,
                  t.header && r === 0 ? "bold" : (p.weight ?? "regular"),
                ),
              ),
            ),
          ),
      );
    const sized = t.columns.map((c, i) => (c.width === "auto" ? natural(i) : c.width));
    const fixed = sized.reduce<number>((s, w) => s + (w === "fill" ? 0 : w), 0);
    const fills = sized.filter((w) => w === "fill").length;
    const widths = sized.map((w) =>
      w === "fill" ? Math.max(0, (contentWidth - fixed) / Math.max(1, fills)) : w,
    );
    const xs = widths.map((_, i) => left + widths.slice(0, i).reduce((s, w) => s + w, 0));
    const inner = (i: number) => Math.max(1, widths[i] - 2 * CELL_PAD_X);
    /** A row as the lines of each cell, every paragraph wrapped to its column. */
    const linesOf = (row: Cell[], bold: boolean): CellLine[][] =>
      row.map((cell, i) =>
        paras(cell).flatMap((p) => {
          const size = p.size ?? t.size;
          const weight = bold ? "bold" : (p.weight ?? "regular");
          return wrap(p.text, inner(i), size, weight, m).map((text) => ({
            text,
            size,
            weight,
            color: p.color ?? INK,
          }));
        }),
      );
    const heightOf = (lines: CellLine[]) => lines.reduce((s, l) => s + lineHeight(m, l.size), 0);
    const header = t.header ? linesOf(t.header, true) : null;
    const headerHeight = header ? Math.max(...header.map(heightOf)) + 2 * CELL_PAD_Y : 0;

    /**
     * Draws the cells' lines from `from` (per cell) that fit above `limit`, at least one line of
     * the row (so a page always moves the row on); returns the next `from`.
     */
    const drawRow = (cells: CellLine[][], from: number[], limit: number) => {
      const next = [...from];
      let rowHeight = 0;
      let drawn = 0;
      cells.forEach((lines, i) => {
        let top = y + CELL_PAD_Y;
        let k = from[i];
        for (; k < lines.length; k++) {
          const lh = lineHeight(m, lines[k].size);
          if (top + lh > limit && (drawn > 0 || k > from[i])) break;
          drawn++;
          const w = m.width(lines[k].text, lines[k].size, lines[k].weight);
          const x = t.columns[i].align === "right" ? xs[i] + widths[i] - CELL_PAD_X - w : xs[i] + CELL_PAD_X;
          page().push(textBox(x, top, lines[k]));
          top += lh;
        }
        next[i] = k;
        rowHeight = Math.max(rowHeight, top - y + CELL_PAD_Y);
      });
      y += rowHeight;
      if (t.rules) page().push({ kind: "rule", x: left, y, width: contentWidth, color: HAIRLINE });
      return next;
    };
    const drawHeader = () => {
      if (!header) return;
      drawRow(
        header,
        header.map(() => 0),
        Number.POSITIVE_INFINITY,
      );
      page().push({ kind: "rule", x: left, y, width: contentWidth, color: INK });
    };

    const rows = t.rows.map((r) => linesOf(r, false));
    // The header never stands alone at the foot of a page: it goes with the first row.
    const firstHeight = rows.length ? Math.max(...rows[0].map(heightOf)) + 2 * CELL_PAD_Y : 0;
    need(headerHeight + firstHeight);
    drawHeader();
    /** Nothing but the header on this page yet: moving on would leave it alone. */
    let fresh = true;
    for (const cells of rows) {
      const height = Math.max(...cells.map(heightOf)) + 2 * CELL_PAD_Y;
      if (y + height > bottom && !fresh) {
        newPage();
        drawHeader();
      }
      fresh = false;
      let from = cells.map(() => 0);
      // Taller than what is left of a fresh page: split between lines, header again on the next.
      for (;;) {
        from = drawRow(cells, from, bottom);
        if (from.every((k, i) => k >= cells[i].length)) break;
        newPage();
        drawHeader();
      }
    }
  }
}
