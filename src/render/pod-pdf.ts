/**
 * The proof of delivery (contract §19) as a PDF with @cantoo/pdf-lib: the same content as the
 * HTML, with the photos and signatures embedded (their thumbnails when they have one: a 200 px
 * image keeps the PDF small and its rendering inside a Worker's memory and CPU).
 */

import { PDFDocument, type PDFFont, type PDFImage, StandardFonts } from "@cantoo/pdf-lib";
import { winAnsi } from "./pdf-text";
import { type PodData, when } from "./pod";

const A4: [number, number] = [595.28, 841.89];
const M = 48;

/** `bytes(key)`: a stored image's bytes (PNG or JPEG are embedded; anything else is named). */
export async function renderPodPdf(
  d: PodData,
  bytes: (key: string) => Promise<Uint8Array | null>,
): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setTitle(winAnsi(d.title));
  doc.setCreator("field-dispatch");
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  let page = doc.addPage(A4);
  let y = A4[1] - M;
  const room = (h: number) => {
    if (y - h < M) {
      page = doc.addPage(A4);
      y = A4[1] - M;
    }
  };
  const text = (t: string, size = 10, font: PDFFont = regular, gap = 4) => {
    room(size);
    page.drawText(winAnsi(t), { x: M, y: y - size, size, font, maxWidth: A4[0] - 2 * M });
    y -= size + gap;
  };
  text(d.title, 15, bold, 10);
  text(`Status: ${d.task.state}`);
  text(`Address: ${d.task.address}`);
  text(`Contact: ${[d.task.contactName, ...d.task.phones].filter(Boolean).join(", ")}`);
  text(
    `${d.task.state === "failed" ? "Failed" : "Completed"}: ${when(d.finished.at, d.timeZone)} (${d.timeZone})`,
  );
  if (d.finished.location)
    text(`Where: ${d.finished.location[1].toFixed(5)}, ${d.finished.location[0].toFixed(5)}`);
  if (d.finished.notes) text(`Notes: ${d.finished.notes}`);
  if (d.reference !== null) text(`Reference: ${d.reference}`);
  if (d.description !== null) text(`Description: ${d.description}`);
  const gallery = async (title: string, items: { key: string; fileName: string; caption: string }[]) => {
    y -= 8;
    text(title, 12, bold, 6);
    if (!items.length) text("None.");
    let x = M;
    const size = 150;
    for (const item of items) {
      const data = await bytes(item.key);
      let img: PDFImage | null = null;
      try {
        if (data && data[0] === 0x89 && data[1] === 0x50) img = await doc.embedPng(data);
        else if (data && data[0] === 0xff && data[1] === 0xd8) img = await doc.embedJpg(data);
      } catch {
        img = null;
      }
      if (!img) {
        text(`${item.caption} (${item.fileName})`, 9);
        continue;
      }
      const scale = Math.min(size / img.width, size / img.height, 1);
      const w = img.width * scale;
      const h = img.height * scale;
      if (x + w > A4[0] - M) {
        x = M;
        y -= size + 24;
      }
      room(size + 24);
      page.drawImage(img, { x, y: y - h, width: w, height: h });
      page.drawText(winAnsi(item.caption).slice(0, 40), { x, y: y - h - 12, size: 8, font: regular });
      x += size + 12;
    }
    if (x > M) y -= size + 24;
  };
  if (d.images)
    await gallery(
      "Photos",
      d.images.map((i) => ({ key: i.key, fileName: i.fileName, caption: i.description || i.fileName })),
    );
  if (d.signatures) {
    await gallery(
      "Signatures",
      d.signatures.map((s) => ({
        key: s.key,
        fileName: s.fileName,
        caption: s.signer ? `Signed by ${s.signer}` : s.fileName,
      })),
    );
  }
  if (d.events) {
    y -= 8;
    text("History", 12, bold, 6);
    for (const ev of d.events)
      text(`${when(ev.at, d.timeZone)}: ${ev.action}${ev.by ? ` (${ev.by})` : ""}`, 9);
  }
  return doc.save({ useObjectStreams: false });
}
