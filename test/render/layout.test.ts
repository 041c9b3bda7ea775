import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { A4, type Block, type Box, layout, type Metrics, type TextBox, wrap } from "../../src/render/layout";
import { fitRouteMap, type LonLat } from "../../src/render/route-map";

// A font where every character is 0.5 em wide: widths are known without a font file.
const M: Metrics = { width: (t, size) => Array.from(t).length * size * 0.5, ascent: 0.8, descent: 0.2 };

const texts = (page: Box[]) => page.filter((b): b is TextBox => b.kind === "text");
const overlap = (a: TextBox, b: TextBox) =>
  a.x < b.x + b.width - 0.01 &&
  b.x < a.x + a.width - 0.01 &&
  a.y < b.y + b.height - 0.01 &&
  b.y < a.y + a.height - 0.01;
function expectApart(pages: Box[][]) {
  for (const [p, page] of pages.entries()) {
    const t = texts(page);
    for (let i = 0; i < t.length; i++) {
      // Inside the page's margins, and apart from every other line.
      expect(t[i].x, `page ${p + 1}: "${t[i].text}"`).toBeGreaterThanOrEqual(A4.margin - 0.01);
      expect(t[i].x + t[i].width).toBeLessThanOrEqual(A4.width - A4.margin + 0.01);
      expect(t[i].y + t[i].height).toBeLessThanOrEqual(A4.height - A4.margin + 0.01);
      for (let j = i + 1; j < t.length; j++)
        expect(overlap(t[i], t[j]), `page ${p + 1}: "${t[i].text}" / "${t[j].text}"`).toBe(false);
    }
  }
}

describe("wrap", () => {
  it("breaks at spaces within the width, and a word longer than the line between characters", () => {
    expect(wrap("aaaa bbbb cccc", 50, 10, "regular", M)).toEqual(["aaaa bbbb", "cccc"]);
    expect(wrap("x".repeat(25), 50, 10, "regular", M)).toEqual([
      "x".repeat(10),
      "x".repeat(10),
      "x".repeat(5),
    ]);
    expect(wrap("ab\n\ncd", 50, 10, "regular", M)).toEqual(["ab", "", "cd"]);
    expect(wrap("", 50, 10, "regular", M)).toEqual([""]);
  });

  it("never makes a line wider than asked, and loses no character but spaces", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.integer({ min: 6, max: 300 }), (s, width) => {
        const lines = wrap(s, width, 10, "regular", M);
        for (const l of lines) expect(M.width(l, 10, "regular")).toBeLessThanOrEqual(width);
        expect(lines.join("").replace(/\s/g, "")).toBe(s.replace(/\s/g, ""));
      }),
    );
  });
});

describe("layout", () => {
  const longName = "Kuldīgas novada pašvaldības aģentūra ".repeat(4);
  const rows = Array.from({ length: 80 }, (_, i) => [
    String(i + 1),
    [{ text: `${longName}${i + 1}`, weight: "bold" as const }, { text: `Šiauliai, Vilniaus g. ${i + 1}` }],
    "08:00",
    "1,2 km",
  ]);
  const table: Block = {
    kind: "table",
    size: 9,
    rules: true,
    columns: [{ width: "auto" }, { width: "fill" }, { width: "auto" }, { width: 60, align: "right" }],
    header: ["#", "Pietura", "Ierašanās", "Posms"],
    rows,
  };

  it("lays an 80-row table over pages: rows never overlap or straddle a page, the header row leads each page", () => {
    const pages = layout([{ kind: "text", text: "Title", size: 16, weight: "bold" }, table], A4, M);
    expect(pages.length).toBeGreaterThan(3);
    expectApart(pages);
    for (const [p, page] of pages.entries()) {
      const t = texts(page);
      const header = t.filter((b) => b.text === "Pietura");
      expect(header, `page ${p + 1}`).toHaveLength(1);
      // The header is above every row of the page.
      expect(t.filter((b) => b.y < header[0].y && b.text !== "Title")).toEqual([]);
    }
    // Every row's number is there once, and its cells are on the same page as its number.
    const numbers = pages.flatMap((page) => texts(page).filter((b) => /^\d+$/.test(b.text) && b.x < 80));
    expect(numbers.map((b) => b.text)).toEqual(rows.map((r) => r[0]));
    for (const page of pages) {
      for (const n of texts(page).filter((b) => /^\d+$/.test(b.text) && b.x < 80)) {
        expect(texts(page).some((b) => b.text.endsWith(` ${n.text}`) && b.y >= n.y)).toBe(true);
      }
    }
  });

  it("keeps a heading with what follows it", () => {
    // Fill a page nearly to the bottom, then a heading and a table: both go to the next page.
    const filler: Block = { kind: "text", text: "word ".repeat(1430), size: 10 };
    const pages = layout(
      [filler, { kind: "text", text: "Unassigned", size: 13, weight: "bold", keepWithNext: true }, table],
      A4,
      M,
    );
    const first = pages.findIndex((page) => texts(page).some((b) => b.text === "Unassigned"));
    const header = pages.findIndex((page) => texts(page).some((b) => b.text === "Pietura"));
    expect(first).toBe(header);
    expectApart(pages);
  });

  it("splits a row taller than a page between lines, with the header again on the next page", () => {
    const huge: Block = {
      kind: "table",
      size: 10,
      columns: [{ width: "fill" }],
      header: ["Notes"],
      rows: [["line ".repeat(4000)]],
    };
    const pages = layout([huge], A4, M);
    expect(pages.length).toBeGreaterThan(1);
    for (const page of pages) expect(texts(page)[0].text).toBe("Notes");
    expectApart(pages);
  });
});

describe("route map", () => {
  it("fits every point inside the box and keeps the stop numbers from overlapping, however dense", () => {
    const point = fc.tuple(
      fc.double({ min: 19.4, max: 19.5, noNaN: true }),
      fc.double({ min: 51.7, max: 51.8, noNaN: true }),
    );
    fc.assert(
      fc.property(fc.array(point, { minLength: 1, maxLength: 120 }), (pts) => {
        const map = fitRouteMap(
          [
            {
              color: "#000000",
              start: pts[0] as LonLat,
              end: pts[0] as LonLat,
              stops: pts.map((p, i) => ({ n: i + 1, at: p as LonLat })),
            },
          ],
          {
            width: 500,
            height: 300,
            labelSize: 7,
            labelWidth: (t) => t.length * 4,
            labelHeight: 9.5,
            depotHalf: 4.5,
          },
        )!;
        const stops = map.routes[0].stops;
        expect(stops).toHaveLength(pts.length);
        for (const s of stops) {
          expect(s.x).toBeGreaterThanOrEqual(0);
          expect(s.x).toBeLessThanOrEqual(500);
          expect(s.y).toBeGreaterThanOrEqual(0);
          expect(s.y).toBeLessThanOrEqual(300);
        }
        const labels = stops.flatMap((s) => (s.label ? [s.label] : []));
        expect(labels.length).toBeGreaterThan(0);
        for (let i = 0; i < labels.length; i++)
          for (let j = i + 1; j < labels.length; j++)
            expect(Math.hypot(labels[i].x - labels[j].x, labels[i].y - labels[j].y)).toBeGreaterThanOrEqual(
              labels[i].r + labels[j].r,
            );
      }),
      { numRuns: 30 },
    );
  });

  it("keeps north up and east right, and draws nothing without coordinates", () => {
    const map = fitRouteMap(
      [
        {
          color: "#000000",
          start: null,
          end: null,
          stops: [
            { n: 1, at: [24.7, 59.4] },
            { n: 2, at: [24.8, 59.5] },
            { n: 3, at: null },
          ],
        },
      ],
      {
        width: 400,
        height: 300,
        labelSize: 7,
        labelWidth: (t) => t.length * 4,
        labelHeight: 9.5,
        depotHalf: 4.5,
      },
    )!;
    const [a, b] = map.routes[0].stops;
    expect(b.x).toBeGreaterThan(a.x);
    expect(b.y).toBeLessThan(a.y);
    expect(map.routes[0].stops).toHaveLength(2);
    expect(
      fitRouteMap([{ color: "#000000", start: null, end: null, stops: [{ n: 1, at: null }] }], {
        width: 400,
        height: 300,
        labelSize: 7,
        labelWidth: () => 4,
        labelHeight: 9.5,
        depotHalf: 4.5,
      }),
    ).toBeNull();
  });
});
