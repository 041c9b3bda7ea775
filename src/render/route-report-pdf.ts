/**
 * The route-optimization report as a PDF (contract §16), with @cantoo/pdf-lib (the maintained
 * fork of pdf-lib: pure JavaScript, runs in Workers). A4 pages of text: per route its stops,
 * times and legs, then the unassigned tasks with their reasons. The standard Helvetica font
 * encodes WinAnsi only; other characters are written as "?" rather than failing the report.
 */

import { PDFDocument, type PDFFont, rgb, StandardFonts } from "@cantoo/pdf-lib";
import { winAnsi } from "./pdf-text";
import { hm, km, REASONS, type ReportData, timeIn } from "./route-report";

const A4: [number, number] = [595.28, 841.89];
const MARGIN = 48;

export async function renderRouteReportPdf(d: ReportData): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setTitle(winAnsi(d.title));
  doc.setCreator("field-dispatch");
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  let page = doc.addPage(A4);
  let y = A4[1] - MARGIN;
  const line = (text: string, size = 10, font: PDFFont = regular, gap = 4) => {
    if (y - size < MARGIN) {
      page = doc.addPage(A4);
      y = A4[1] - MARGIN;
    }
    page.drawText(winAnsi(text), {
      x: MARGIN,
      y: y - size,
      size,
      font,
      color: rgb(0.1, 0.1, 0.1),
      maxWidth: A4[0] - 2 * MARGIN,
    });
    y -= size + gap;
  };
  line(d.title, 16, bold, 8);
  line(
    `${d.state} - ${d.routes.length} routes - ${km(d.distance_m)} - ${hm(d.duration_s)} - times in ${d.timeZone}`,
    10,
    regular,
    12,
  );
  for (const r of d.routes) {
    line(r.label, 13, bold, 4);
    line(`${km(r.distance_m)} - ${hm(r.duration_s)} - ${r.stops.length} stops`, 10, regular, 6);
    r.stops.forEach((s, i) => {
      line(
        `${i + 1}. ${s.label}   arrive ${timeIn(s.arrival, d.timeZone)}  start ${timeIn(s.start, d.timeZone)}  leave ${timeIn(s.departure, d.timeZone)}   leg ${km(s.distance_m)}, ${hm(s.duration_s)}`,
        9,
      );
    });
    y -= 8;
  }
  if (d.unassigned.length) {
    line("Unassigned", 13, bold, 4);
    for (const u of d.unassigned) line(`${u.label}: ${REASONS[u.reason] ?? u.reason}`, 9);
  }
  return doc.save({ useObjectStreams: false });
}
