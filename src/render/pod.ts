/**
 * The proof of delivery (contract §19) as HTML, readable on a phone and printable: pure, data
 * in, a string out. Images are the stored files' URLs (public by their unguessable keys). The
 * words are the document's language's (src/domain/pod-labels.ts), the same as the PDF's.
 */
import type { Locale } from "../domain/locales";
import { actionLabel, POD_LABELS, type PodLabels } from "../domain/pod-labels";
import { escapeHtml as e } from "./html";

export type PodImage = {
  url: string;
  key: string;
  fileName: string;
  mimetype: string | null;
  description: string;
};
export type PodData = {
  language: Locale;
  timeZone: string;
  task: {
    id: string;
    state: "completed" | "failed";
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

/** A moment in the account's time zone, written the document's language's way. */
export function when(ms: number | null, zone: string, language: Locale): string {
  if (ms === null) return "";
  return new Intl.DateTimeFormat(language, {
    timeZone: zone,
    dateStyle: "medium",
    timeStyle: "short",
  }).format(ms);
}

export const podTitle = (d: PodData, L: PodLabels = POD_LABELS[d.language]) =>
  d.task.address ? `${L.title} — ${d.task.address}` : L.title;

/** The label/value rows both renderings show, in order. */
export function podRows(d: PodData, L: PodLabels): [string, string][] {
  const rows: [string, string][] = [
    [L.status, L.states[d.task.state]],
    [L.address, d.task.address],
    [L.contact, [d.task.contactName, ...d.task.phones].filter(Boolean).join(", ")],
    [
      d.task.state === "failed" ? L.failedAt : L.completedAt,
      `${when(d.finished.at, d.timeZone, d.language)} (${d.timeZone})`,
    ],
  ];
  if (d.finished.location)
    rows.push([L.where, `${d.finished.location[1].toFixed(5)}, ${d.finished.location[0].toFixed(5)}`]);
  if (d.finished.notes) rows.push([L.notes, d.finished.notes]);
  // Shown when the options ask for them and there is something to show: an empty value under
  // its label reads as a rendering fault.
  if (d.reference) rows.push([L.reference, d.reference]);
  if (d.description) rows.push([L.description, d.description]);
  return rows;
}

export const signatureCaption = (s: { signer: string | null; fileName: string }, L: PodLabels) =>
  s.signer ? L.signedBy(s.signer) : s.fileName;

export function renderPodHtml(d: PodData): string {
  const L = POD_LABELS[d.language];
  const figure = (i: { url: string; fileName: string }, caption: string) =>
    `<figure><img src="${e(i.url)}" alt="${e(i.fileName)}"><figcaption>${e(caption)}</figcaption></figure>`;
  const none = `<p>${e(L.none)}</p>`;
  const history = d.events
    ? `<h2>${e(L.history)}</h2>${
        d.events.length
          ? `<table class="history"><thead><tr><th>${e(L.time)}</th><th>${e(L.event)}</th>${d.events.some((ev) => ev.by) ? `<th>${e(L.by)}</th>` : ""}</tr></thead><tbody>${d.events
              .map(
                (ev) =>
                  `<tr><td>${e(when(ev.at, d.timeZone, d.language))}</td><td>${e(actionLabel(L, ev.action))}</td>${d.events!.some((x) => x.by) ? `<td>${e(ev.by ?? "")}</td>` : ""}</tr>`,
              )
              .join("")}</tbody></table>`
          : none
      }`
    : "";
  return `<!doctype html>
<html lang="${e(d.language)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(podTitle(d, L))}</title>
<style>body{font-family:system-ui,sans-serif;margin:1rem;color:#222;max-width:48rem}h1{font-size:1.3rem}h2{font-size:1.1rem}table{border-collapse:collapse}th{text-align:left;padding-right:1rem;vertical-align:top}td,th{padding:.25rem .5rem .25rem 0;vertical-align:top}td{overflow-wrap:anywhere}.facts td{white-space:pre-line}@media (max-width:30rem){.facts th,.facts td{display:block}.facts th{padding:.5rem 0 0;font-size:.85rem;color:#555}}.history td,.history th{border-bottom:1px solid #ddd}figure{display:inline-block;margin:.3rem;vertical-align:top;max-width:12rem}img{max-width:12rem;max-height:12rem;border:1px solid #ddd}</style>
</head><body><h1>${e(podTitle(d, L))}</h1>
<table class="facts">${podRows(d, L)
    .map(([k, v]) => `<tr><th>${e(k)}</th><td>${e(v)}</td></tr>`)
    .join("")}</table>
${d.images ? `<h2>${e(L.photos)}</h2>${d.images.length ? d.images.map((i) => figure(i, i.description || i.fileName)).join("") : none}` : ""}
${d.signatures ? `<h2>${e(L.signatures)}</h2>${d.signatures.length ? d.signatures.map((s) => figure(s, signatureCaption(s, L))).join("") : none}` : ""}
${history}
</body></html>`;
}
