/**
 * The route-optimization report as a PDF (contract §16), with @cantoo/pdf-lib (pure JavaScript,
 * runs in Workers): the same words and content as the HTML report, laid out by the layout engine
 * (layout.ts) in the embedded Noto Sans (pdf-doc.ts). A4 pages: the totals and a map of all
 * routes, then per route its map and a table of its stops whose header row repeats on each
 * page, then the unassigned tasks with their reasons. The maps are vector paths (ISO 32000-1
 * §8.5: path construction and painting), drawn from the same geometry as the HTML's SVG.
 */

import type { PDFPage } from "@cantoo/pdf-lib";
import { formatDuration, formatKm, REPORT_LABELS } from "../domain/report-labels";
import { A4, type Block, layout, type Metrics } from "./layout";
import { createPdf, drawPages, type FontFiles, hexColor, hexRgb, type Pdf } from "./pdf-doc";
import { fitRouteMap, type MapDepot, type RouteMap, routeColor } from "./route-map";
import {
  depotLabel,
  mapInput,
  type ReportData,
  reasonLabel,
  reportTitle,
  routeSummary,
  summary,
  taskAddressLine,
  taskHeadline,
  timeIn,
} from "./route-report";

const GREY = [0.38, 0.38, 0.38] as const;
const LABEL_SIZE = 7;
const LEGEND_SIZE = 8;
const DEPOT_HALF = 4.5;

/** A map and its legend: route lines with names (when several), and the depot markers. */
type MapFigure = {
  map: RouteMap;
  legend: { kind: "line" | MapDepot["kind"]; color: string; label: string }[];
};

const CONTENT_WIDTH = A4.width - 2 * A4.margin;
const contentWidthThird = CONTENT_WIDTH / 3;

function mapFigure(d: ReportData, which: number[], m: Metrics): Block<MapFigure> | null {
  const L = REPORT_LABELS[d.language];
  const map = fitRouteMap(mapInput(d, which), {
    width: CONTENT_WIDTH,
    height: which.length > 1 ? 320 : 240,
    labelSize: LABEL_SIZE,
    labelWidth: (t) => m.width(t, LABEL_SIZE, "bold"),
    labelHeight: (m.ascent + m.descent) * LABEL_SIZE,
    depotHalf: DEPOT_HALF,
  });
  if (!map) return null;
  const kinds = [...new Set(map.routes.flatMap((r) => r.depots.map((x) => x.kind)))];
  const legend: MapFigure["legend"] = [
    ...(which.length > 1
      ? which.map((i) => ({ kind: "line" as const, color: routeColor(i), label: d.routes[i].label }))
      : []),
    ...kinds.map((k) => ({ kind: k, color: "#444444", label: depotLabel(L)(k) })),
  ];
  return {
    kind: "figure",
    width: CONTENT_WIDTH,
    height: map.height + legendHeight(legend, m),
    figure: { map, legend },
    before: 4,
    after: 8,
  };
}

/** Legend entries flow left to right: a 16 pt swatch, the label, a gap; as many lines as needed. */
function legendLines(legend: MapFigure["legend"], m: Metrics) {
  const lines: { x: number; item: MapFigure["legend"][number]; text: string }[][] = [[]];
  let x = 0;
  for (const item of legend) {
    let text = m.normalize ? m.normalize(item.label) : item.label;
    // A name longer than the whole line is cut, with an ellipsis: the table below names it in full.
    while (text.length > 1 && 20 + m.width(text, LEGEND_SIZE, "regular") > CONTENT_WIDTH)
      text = `${Array.from(text).slice(0, -2).join("")}…`;
    const w = 20 + m.width(text, LEGEND_SIZE, "regular");
    if (x > 0 && x + w > CONTENT_WIDTH) {
      lines.push([]);
      x = 0;
    }
    lines[lines.length - 1].push({ x, item, text });
    x += w + 12;
  }
  return lines;
}
const legendHeight = (legend: MapFigure["legend"], m: Metrics) =>
  legend.length ? 4 + legendLines(legend, m).length * (m.ascent + m.descent) * LEGEND_SIZE : 0;

function drawMap(
  pdf: Pdf,
  page: PDFPage,
  x0: number,
  top: number,
  f: MapFigure,
  flipY: (y: number) => number,
) {
  const { map } = f;
  const X = (x: number) => x0 + x;
  const Y = (y: number) => flipY(top + y);
  const m = pdf.metrics;
  page.drawRectangle({
    x: x0,
    y: Y(map.height),
    width: map.width,
    height: map.height,
    color: hexColor("#f7f7f5"),
    borderColor: hexColor("#dddddd"),
    borderWidth: 0.5,
  });
  for (const r of map.routes) {
    if (r.path.length < 2) continue;
    // An SVG path in the map's own top-down units, placed at the map's top-left corner.
    const d = r.path.map(([x, y], i) => `${i ? "L" : "M"}${x.toFixed(2)} ${y.toFixed(2)}`).join(" ");
    page.drawSvgPath(d, {
      x: x0,
      y: Y(0),
      borderColor: hexColor(r.color),
      borderWidth: 1.4,
      borderOpacity: 0.85,
    });
  }
  for (const r of map.routes)
    for (const s of r.stops) page.drawCircle({ x: X(s.x), y: Y(s.y), size: 1.8, color: hexColor(r.color) });
  for (const r of map.routes)
    for (const dep of r.depots)
      page.drawRectangle({
        x: X(dep.x - DEPOT_HALF),
        y: Y(dep.y + DEPOT_HALF),
        width: 2 * DEPOT_HALF,
        height: 2 * DEPOT_HALF,
        color: hexColor("#ffffff"),
        borderColor: hexColor(r.color),
        borderWidth: 1.8,
      });
  for (const r of map.routes) {
    for (const s of r.stops) {
      const l = s.label;
      if (!l) continue;
      if (l.x !== s.x || l.y !== s.y)
        page.drawLine({
          start: { x: X(s.x), y: Y(s.y) },
          end: { x: X(l.x), y: Y(l.y) },
          thickness: 0.6,
          color: hexColor(r.color),
        });
      page.drawCircle({
        x: X(l.x),
        y: Y(l.y),
        size: l.r,
        color: hexColor(r.color),
        borderColor: hexColor("#ffffff"),
        borderWidth: 0.6,
      });
      const w = m.width(l.text, LABEL_SIZE, "bold");
      // The number's line box centred on the disc: its baseline sits (ascent - descent) / 2 below.
      page.drawText(l.text, {
        x: X(l.x - w / 2),
        y: Y(l.y + ((m.ascent - m.descent) / 2) * LABEL_SIZE),
        size: LABEL_SIZE,
        font: pdf.fonts.bold,
        color: hexColor("#ffffff"),
      });
    }
  }
  const lh = (m.ascent + m.descent) * LEGEND_SIZE;
  legendLines(f.legend, m).forEach((line, k) => {
    const y = map.height + 4 + k * lh;
    for (const { x, item, text } of line) {
      const mid = y + lh / 2;
      if (item.kind === "line")
        page.drawLine({
          start: { x: X(x), y: Y(mid) },
          end: { x: X(x + 16), y: Y(mid) },
          thickness: 2.5,
          color: hexColor(item.color),
        });
      else
        page.drawRectangle({
          x: X(x + 4),
          y: Y(mid + 4),
          width: 8,
          height: 8,
          color: hexColor("#ffffff"),
          borderColor: hexColor(item.color),
          borderWidth: 1.5,
        });
      page.drawText(text, {
        x: X(x + 20),
        y: Y(y + m.ascent * LEGEND_SIZE),
        size: LEGEND_SIZE,
        font: pdf.fonts.regular,
        color: hexColor("#333333"),
      });
    }
  });
}

export async function renderRouteReportPdf(d: ReportData, fontFiles: FontFiles): Promise<Uint8Array> {
  const L = REPORT_LABELS[d.language];
  const title = reportTitle(d, L);
  const pdf = await createPdf(fontFiles, { title, language: d.language });
  const m = pdf.metrics;
  const c = L.columns;
  const blocks: Block<MapFigure>[] = [
    { kind: "text", text: title, size: 16, weight: "bold", after: 4 },
    { kind: "text", text: summary(d, L), size: 10, color: GREY, after: 6 },
  ];
  const push = (b: Block<MapFigure> | null) => b && blocks.push(b);
  if (d.routes.length > 1) push(mapFigure(d, [...d.routes.keys()], m));
  d.routes.forEach((r, i) => {
    blocks.push({
      kind: "text",
      text: r.label,
      size: 13,
      weight: "bold",
      // The route's name in its colour on the maps: the legend of the route's own map.
      color: hexRgb(routeColor(i)),
      before: 14,
      after: 2,
      keepWithNext: true,
    });
    blocks.push({
      kind: "text",
      text: routeSummary(d, r, L),
      size: 9,
      color: GREY,
      after: 2,
      keepWithNext: true,
    });
    push(mapFigure(d, [i], m));
    blocks.push({
      kind: "table",
      size: 8.5,
      rules: true,
      columns: [
        { width: "auto", align: "right" },
        { width: "fill" },
        { width: "auto" },
        { width: "auto" },
        { width: "auto" },
        { width: "auto", align: "right" },
      ],
      header: [c.number, c.stop, c.arrive, c.start, c.leave, c.leg],
      rows: r.stops.map((s, k) => [
        String(k + 1),
        [
          { text: taskHeadline(s), weight: "bold" },
          ...(taskAddressLine(s) ? [{ text: taskAddressLine(s), color: GREY }] : []),
        ],
        timeIn(s.arrival, d.timeZone, d.language),
        timeIn(s.start, d.timeZone, d.language),
        timeIn(s.departure, d.timeZone, d.language),
        [
          { text: formatKm(d.language, s.distance_m) },
          { text: formatDuration(L, s.duration_s), color: GREY },
        ],
      ]),
    });
  });
  if (d.unassigned.length) {
    blocks.push({
      kind: "text",
      text: L.unassigned,
      size: 13,
      weight: "bold",
      before: 14,
      after: 4,
      keepWithNext: true,
    });
    blocks.push({
      kind: "table",
      size: 8.5,
      rules: true,
      columns: [{ width: "fill" }, { width: contentWidthThird }],
      header: [L.task, L.reason],
      rows: d.unassigned.map((u) => [
        [
          { text: taskHeadline(u), weight: "bold" },
          ...(taskAddressLine(u) ? [{ text: taskAddressLine(u), color: GREY }] : []),
        ],
        reasonLabel(L, u.reason),
      ]),
    });
  }
  drawPages(pdf, A4, layout(blocks, A4, m), [], (page, box, flipY) =>
    drawMap(pdf, page, box.x, box.y, box.figure, flipY),
  );
  return pdf.doc.save({ useObjectStreams: false });
}
