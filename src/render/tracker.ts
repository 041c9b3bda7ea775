/**
 * The recipient's tracking page (contract §17): server-rendered, readable on a phone. Its one
 * small script (live-script.ts) keeps it current over the tracker's stream within a second
 * (contract §25); with scripts off, a `<noscript>` refresh reloads it every 30 s. Pure: data
 * in, HTML out; the popup is already escaped.
 */
import type { Locale } from "../domain/locales";
import { stateLabel, TRACKER_LABELS } from "../domain/tracker-labels";
import { escapeHtml as e } from "./html";

type Point = [lon: number, lat: number];
export type PublicTask = Record<string, unknown>;
export type PublicTracker = {
  language: Locale;
  /** The account's time zone: times on the page are the recipient's local ones, named. */
  timeZone: string;
  mapProvider: string;
  mapRegion: string | null;
  /**
   * What the map link may show: the point when `address.location` is allowlisted, else the
   * formatted address when that is, else nothing (the link never reveals more than the page).
   */
  tasks: { fields: PublicTask; popup: string; place: MapPlace | null }[];
  /** The tracker's live stream (`/t/<token>/stream/`), which the page's script follows. */
  streamPath?: string;
};
export type MapPlace = { point: Point } | { query: string };

function mapLink(t: PublicTracker, place: MapPlace): string {
  const google = t.mapProvider === "google";
  const region = google && t.mapRegion ? `&region=${encodeURIComponent(t.mapRegion)}` : "";
  if ("query" in place) {
    const q = encodeURIComponent(place.query);
    return google
      ? `https://www.google.com/maps/search/?api=1&query=${q}${region}`
      : `https://www.openstreetmap.org/search?query=${q}`;
  }
  const [lon, lat] = place.point;
  if (google) return `https://www.google.com/maps/search/?api=1&query=${lat},${lon}${region}`;
  return `https://www.openstreetmap.org/?mlat=${lat}&mlon=${lon}#map=17/${lat}/${lon}`;
}

/** A time as the reader writes it (their language), in the account's zone, with the zone named. */
function fmt(t: PublicTracker, iso: unknown): string {
  if (typeof iso !== "string") return "";
  return new Intl.DateTimeFormat(t.language, {
    timeZone: t.timeZone,
    day: "numeric",
    month: "short",
    hour: "numeric",
    minute: "2-digit",
    timeZoneName: "short",
  }).format(new Date(iso));
}

export function renderTrackerHtml(t: PublicTracker): string {
  const words = TRACKER_LABELS[t.language];
  const cards = t.tasks
    .map((task) => {
      const f = task.fields as Record<string, any>;
      const rows: string[] = [];
      if (f.state !== undefined)
        rows.push(`<p class="state" data-state="${e(f.state)}">${e(stateLabel(words, f.state))}</p>`);
      if (f.address?.formatted_address) rows.push(`<p>${e(f.address.formatted_address)}</p>`);
      if (f.complete_after || f.complete_before)
        rows.push(
          `<p class="window">${e(words.window)}: ${e(fmt(t, f.complete_after))} – ${e(fmt(t, f.complete_before))}</p>`,
        );
      if (f.eta)
        rows.push(
          `<p class="eta">${e(words.eta)}: <time datetime="${e(f.eta)}">${e(fmt(t, f.eta))}</time></p>`,
        );
      if (f.predicted_delivery_error) rows.push(`<p class="eta-error">${e(f.predicted_delivery_error)}</p>`);
      if (f.assignee?.name) rows.push(`<p>${e(words.driver)}: ${e(f.assignee.name)}</p>`);
      if (f.reference) rows.push(`<p>${e(words.reference)}: ${e(f.reference)}</p>`);
      if (task.place)
        rows.push(
          `<p><a href="${e(mapLink(t, task.place))}" rel="noopener noreferrer">${e(words.map)}</a></p>`,
        );
      if (task.popup) rows.push(`<div class="popup">${task.popup}</div>`);
      return `<section class="task">${rows.join("\n")}</section>`;
    })
    .join("\n");
  return `<!doctype html>
<html lang="${e(t.language)}"${t.streamPath ? ` data-stream="${e(t.streamPath)}"` : ""}><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<noscript><meta http-equiv="refresh" content="30"></noscript><meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>${e(words.title)}</title>
<style>body{font-family:system-ui,sans-serif;margin:0;padding:1rem;background:#f6f6f4;color:#222}section{background:#fff;border-radius:.6rem;padding:.8rem 1rem;margin-bottom:.8rem;box-shadow:0 1px 2px #0001}.state{font-size:1.3rem;font-weight:600;margin:.2rem 0}.eta{font-size:1.1rem}.eta-error{color:#8a4b00}p{margin:.35rem 0}a{color:#0b5cad}</style>
${t.streamPath ? '<script src="/t/live.js" defer></script>' : ""}
</head><body><main><h1>${e(words.title)}</h1>
${cards || `<p>${e(words.empty)}</p>`}
</main></body></html>`;
}
