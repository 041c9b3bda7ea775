/**
 * The proof of delivery (contract §19) as HTML, readable on a phone and printable: pure, data
 * in, a string out. Images are the stored files' URLs (public by their unguessable keys).
 */
import { escapeHtml as e } from "./html";

export type PodImage = {
  url: string;
  key: string;
  fileName: string;
  mimetype: string | null;
  description: string;
};
export type PodData = {
  title: string;
  timeZone: string;
  task: {
    id: string;
    state: string;
    category: string;
    address: string;
    contactName: string;
    phones: string[];
  };
  finished: { at: number | null; location: [number, number] | null; notes: string };
  description: string | null;
  reference: string | null;
  images: PodImage[] | null;
  signatures: (PodImage & { signer: string | null })[] | null;
  events: { at: number; action: string; by: string | null }[] | null;
};

export function when(ms: number | null, zone: string): string {
  if (ms === null) return "";
  return new Intl.DateTimeFormat("en-GB", { timeZone: zone, dateStyle: "medium", timeStyle: "short" }).format(
    ms,
  );
}

export function renderPodHtml(d: PodData): string {
  const rows: [string, string][] = [
    ["Status", d.task.state],
    ["Address", d.task.address],
    ["Contact", [d.task.contactName, ...d.task.phones].filter(Boolean).join(", ")],
    [
      d.task.state === "failed" ? "Failed" : "Completed",
      `${when(d.finished.at, d.timeZone)} (${d.timeZone})`,
    ],
  ];
  if (d.finished.location)
    rows.push(["Where", `${d.finished.location[1].toFixed(5)}, ${d.finished.location[0].toFixed(5)}`]);
  if (d.finished.notes) rows.push(["Notes", d.finished.notes]);
  if (d.reference !== null) rows.push(["Reference", d.reference]);
  if (d.description !== null) rows.push(["Description", d.description]);
  const figure = (i: { url: string; fileName: string; description: string }, caption: string) =>
    `<figure><img src="${e(i.url)}" alt="${e(i.fileName)}"><figcaption>${e(caption)}</figcaption></figure>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(d.title)}</title>
<style>body{font-family:system-ui,sans-serif;margin:1rem;color:#222;max-width:48rem}th{text-align:left;padding-right:1rem;vertical-align:top}td,th{padding:.25rem 0}figure{display:inline-block;margin:.3rem}img{max-width:12rem;max-height:12rem;border:1px solid #ddd}ol{padding-left:1.2rem}</style>
</head><body><h1>${e(d.title)}</h1>
<table>${rows.map(([k, v]) => `<tr><th>${e(k)}</th><td>${e(v)}</td></tr>`).join("")}</table>
${d.images ? `<h2>Photos</h2>${d.images.length ? d.images.map((i) => figure(i, i.description || i.fileName)).join("") : "<p>None.</p>"}` : ""}
${d.signatures ? `<h2>Signatures</h2>${d.signatures.length ? d.signatures.map((s) => figure(s, s.signer ? `Signed by ${s.signer}` : s.fileName)).join("") : "<p>None.</p>"}` : ""}
${d.events ? `<h2>History</h2><ol>${d.events.map((ev) => `<li>${e(when(ev.at, d.timeZone))}: ${e(ev.action)}${ev.by ? ` (${e(ev.by)})` : ""}</li>`).join("")}</ol>` : ""}
</body></html>`;
}
