/**
 * The proof of delivery (contract §19) as a PDF: the same content and words as the HTML, laid
 * out by the layout engine (layout.ts) in the embedded Noto Sans (pdf-doc.ts), with the photos
 * and signatures embedded (their thumbnails when they have one: a 200 px image keeps the PDF
 * small and its rendering inside a Worker's memory and CPU).
 */

import type { PDFImage } from "@cantoo/pdf-lib";
import { actionLabel, POD_LABELS } from "../domain/pod-labels";
import { A4, type Block, layout } from "./layout";
import { createPdf, drawPages, type FontFiles } from "./pdf-doc";
import { type PodData, podRows, podTitle, signatureCaption, when } from "./pod";

const GREY = [0.4, 0.4, 0.4] as const;

/** `bytes(key)`: a stored image's bytes (PNG or JPEG are embedded; anything else is named). */
export async function renderPodPdf(
  d: PodData,
  bytes: (key: string) => Promise<Uint8Array | null>,
  fontFiles: FontFiles,
): Promise<Uint8Array> {
  const L = POD_LABELS[d.language];
  const title = podTitle(d, L);
  const pdf = await createPdf(fontFiles, { title, language: d.language });
  const images: PDFImage[] = [];
  const embed = async (key: string): Promise<number | null> => {
    const data = await bytes(key);
    try {
      if (data && data[0] === 0x89 && data[1] === 0x50) images.push(await pdf.doc.embedPng(data));
      else if (data && data[0] === 0xff && data[1] === 0xd8) images.push(await pdf.doc.embedJpg(data));
      else return null;
    } catch {
      return null;
    }
    return images.length - 1;
  };

  const blocks: Block[] = [
    { kind: "text", text: title, size: 15, weight: "bold", after: 10 },
    {
      kind: "table",
      size: 10,
      columns: [{ width: 130 }, { width: "fill" }],
      rows: podRows(d, L).map(([k, v]) => [[{ text: k, weight: "bold" }], v]),
    },
  ];
  const heading = (text: string) =>
    blocks.push({ kind: "text", text, size: 12, weight: "bold", before: 14, after: 6, keepWithNext: true });
  const gallery = async (items: { key: string; fileName: string; caption: string }[]) => {
    if (!items.length) {
      blocks.push({ kind: "text", text: L.none, size: 10 });
      return;
    }
    const placed: { ref: number; width: number; height: number; caption: string }[] = [];
    for (const item of items) {
      const ref = await embed(item.key);
      if (ref === null) blocks.push({ kind: "text", text: `${item.caption} (${item.fileName})`, size: 9 });
      else placed.push({ ref, width: images[ref].width, height: images[ref].height, caption: item.caption });
    }
    if (placed.length) blocks.push({ kind: "images", cell: 150, size: 8, items: placed });
  };
  if (d.images) {
    heading(L.photos);
    await gallery(
      d.images.map((i) => ({ key: i.key, fileName: i.fileName, caption: i.description || i.fileName })),
    );
  }
  if (d.signatures) {
    heading(L.signatures);
    await gallery(
      d.signatures.map((s) => ({ key: s.key, fileName: s.fileName, caption: signatureCaption(s, L) })),
    );
  }
  if (d.events) {
    heading(L.history);
    if (!d.events.length) blocks.push({ kind: "text", text: L.none, size: 10 });
    else {
      const withBy = d.events.some((ev) => ev.by);
      blocks.push({
        kind: "table",
        size: 9,
        rules: true,
        columns: withBy
          ? [{ width: 150 }, { width: "fill" }, { width: 150 }]
          : [{ width: 150 }, { width: "fill" }],
        header: withBy ? [L.time, L.event, L.by] : [L.time, L.event],
        rows: d.events.map((ev) => {
          const row = [when(ev.at, d.timeZone, d.language), actionLabel(L, ev.action)];
          return withBy ? [...row, [{ text: ev.by ?? "", color: GREY }]] : row;
        }),
      });
    }
  }
  drawPages(pdf, A4, layout(blocks, A4, pdf.metrics), images, () => {});
  return pdf.doc.save({ useObjectStreams: false });
}
