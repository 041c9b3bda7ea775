/**
 * The route-optimization report (contract §16) as an HTML page readable on a phone: the totals,
 * a map of the routes, then per route its map and its stops with times, leg distances and
 * durations, and the unassigned tasks with their reasons. Pure: the result and the names in, a
 * string out; no script, inline CSS and inline SVG only (the page's CSP loads nothing). The
 * words are the report's language's (src/domain/report-labels.ts), the same as the PDF's.
 */
import type { Locale } from "../domain/locales";
import { formatDuration, formatKm, REPORT_LABELS, type ReportLabels } from "../domain/report-labels";
import { escapeHtml as e } from "./html";
import {
  fitRouteMap,
  type LonLat,
  type MapDepot,
  type MapRouteInput,
  routeColor,
  routeMapSvg,
} from "./route-map";

/** A task as a driver tells it apart: its name (description or contact), order reference, address. */
export type ReportTask = { name: string; reference: string; address: string; at: LonLat | null };
export type ReportStop = ReportTask & {
  arrival: string;
  start: string;
  departure: string;
  distance_m: number;
  duration_s: number;
};
export type ReportRoute = {
  label: string;
  start: LonLat | null;
  end: LonLat | null;
  stops: ReportStop[];
  distance_m: number;
  duration_s: number;
};
export type ReportData = {
  id: string;
  language: Locale;
  timeZone: string;
  routes: ReportRoute[];
  unassigned: (ReportTask & { reason: string })[];
  distance_m: number;
  duration_s: number;
};

export const reportTitle = (d: ReportData, L: ReportLabels = REPORT_LABELS[d.language]) =>
  `${L.title} ${d.id.slice(0, 8)}`;

/** A stop's first line: its name and order reference; the address alone when it has no name. */
export const taskHeadline = (t: ReportTask) =>
  [t.name || t.address, t.reference].filter(Boolean).join(" · ") || "—";
/** A stop's second line: its address, when the first line did not already say it. */
export const taskAddressLine = (t: ReportTask) => (t.name ? t.address : "");

export function timeIn(iso: string, zone: string, language: Locale) {
  return new Intl.DateTimeFormat(language, { timeZone: zone, hour: "2-digit", minute: "2-digit" }).format(
    new Date(iso),
  );
}

export const reasonLabel = (L: ReportLabels, reason: string) =>
  (L.reasons as Record<string, string>)[reason] ?? reason;

export const depotLabel = (L: ReportLabels) => (kind: MapDepot["kind"]) =>
  kind === "start" ? L.mapStart : kind === "end" ? L.mapEnd : L.mapStartEnd;

/** The map input of some routes (their colour is their place in the whole report). */
export const mapInput = (d: ReportData, which: number[]): MapRouteInput[] =>
  which.map((i) => {
    const r = d.routes[i];
    return {
      color: routeColor(i),
      start: r.start,
      end: r.end,
      stops: r.stops.map((s, k) => ({ n: k + 1, at: s.at })),
    };
  });

/** The summary line under the title. */
export function summary(d: ReportData, L: ReportLabels): string {
  const stops = d.routes.reduce((n, r) => n + r.stops.length, 0);
  return [
    L.completed,
    `${L.routes}: ${d.routes.length}`,
    `${L.stops}: ${stops}`,
    `${L.distance}: ${formatKm(d.language, d.distance_m)}`,
    `${L.duration}: ${formatDuration(L, d.duration_s)}`,
    `${L.timeZone}: ${d.timeZone}`,
  ].join(" · ");
}

export function routeSummary(d: ReportData, r: ReportRoute, L: ReportLabels): string {
  return [
    `${L.stops}: ${r.stops.length}`,
    `${L.distance}: ${formatKm(d.language, r.distance_m)}`,
    `${L.duration}: ${formatDuration(L, r.duration_s)}`,
  ].join(" · ");
}

// The SVG's own units: 400 wide, so on a phone (about 360 CSS px) the numbers stay legible.
const SVG_WIDTH = 400;
const SVG_LABEL = 11;
const SVG_DEPOT = 6;

function mapHtml(d: ReportData, which: number[], L: ReportLabels, title: string): string {
  const input = mapInput(d, which);
  const map = fitRouteMap(input, {
    width: SVG_WIDTH,
    height: SVG_WIDTH * 0.62,
    labelSize: SVG_LABEL,
    // An estimate of the browser's sans-serif digits (about 0.6 em) and line height.
    labelWidth: (t) => t.length * SVG_LABEL * 0.6,
    labelHeight: SVG_LABEL * 1.2,
    depotHalf: SVG_DEPOT,
  });
  if (!map) return "";
  const kinds = [...new Set(map.routes.flatMap((r) => r.depots.map((x) => x.kind)))];
  const legend = [
    ...(which.length > 1
      ? which.map(
          (i) =>
            `<li><span class="line" style="background:${routeColor(i)}"></span>${e(d.routes[i].label)}</li>`,
        )
      : []),
    ...kinds.map((k) => `<li><span class="depot"></span>${e(depotLabel(L)(k))}</li>`),
  ];
  return `<figure class="map-box">${routeMapSvg(map, title, depotLabel(L), SVG_DEPOT)}${
    legend.length ? `<ul class="legend">${legend.join("")}</ul>` : ""
  }</figure>`;
}

export function renderRouteReportHtml(d: ReportData): string {
  const L = REPORT_LABELS[d.language];
  const c = L.columns;
  const routes = d.routes
    .map(
      (r, i) => `<section><h2><span class="line" style="background:${routeColor(i)}"></span>${e(r.label)}</h2>
<p>${e(routeSummary(d, r, L))}</p>
${mapHtml(d, [i], L, `${L.map}: ${r.label}`)}
<table class="stops"><thead><tr><th class="n">${e(c.number)}</th><th>${e(c.stop)}</th><th>${e(c.arrive)}</th><th>${e(c.start)}</th><th>${e(c.leave)}</th><th>${e(c.leg)}</th></tr></thead><tbody>
${r.stops
  .map((s, k) => {
    const address = taskAddressLine(s);
    // data-label: on a phone the header row is hidden and each time says what it is (CSS below).
    return `<tr><td class="n">${k + 1}</td><td class="stop"><b>${e(taskHeadline(s))}</b>${address ? `<br><span class="addr">${e(address)}</span>` : ""}</td><td data-label="${e(c.arrive)}">${e(timeIn(s.arrival, d.timeZone, d.language))}</td><td data-label="${e(c.start)}">${e(timeIn(s.start, d.timeZone, d.language))}</td><td data-label="${e(c.leave)}">${e(timeIn(s.departure, d.timeZone, d.language))}</td><td data-label="${e(c.leg)}">${e(formatKm(d.language, s.distance_m))}<br>${e(formatDuration(L, s.duration_s))}</td></tr>`;
  })
  .join("\n")}
</tbody></table></section>`,
    )
    .join("\n");
  const unassigned = d.unassigned.length
    ? `<section><h2>${e(L.unassigned)}</h2><table><thead><tr><th>${e(L.task)}</th><th>${e(L.reason)}</th></tr></thead><tbody>${d.unassigned
        .map((u) => {
          const address = taskAddressLine(u);
          return `<tr><td><b>${e(taskHeadline(u))}</b>${address ? `<br><span class="addr">${e(address)}</span>` : ""}</td><td>${e(reasonLabel(L, u.reason))}</td></tr>`;
        })
        .join("")}</tbody></table></section>`
    : "";
  const all = d.routes.map((_, i) => i);
  return `<!doctype html>
<html lang="${e(d.language)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(reportTitle(d, L))}</title>
<style>body{font-family:system-ui,sans-serif;margin:1rem;color:#222;max-width:60rem}table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{text-align:left;padding:.3rem;border-bottom:1px solid #ddd;vertical-align:top;overflow-wrap:anywhere}td:nth-child(n+3),th:nth-child(n+3){white-space:nowrap}.n{text-align:right;width:2rem}.addr{color:#555}section{margin-bottom:1.5rem}h1{font-size:1.3rem}h2{font-size:1.1rem;margin-bottom:.2rem}p{margin:.2rem 0 .6rem;color:#555}.map-box{margin:.4rem 0 .8rem}.map{width:100%;max-width:36rem;height:auto;display:block;border:1px solid #ddd}.legend{list-style:none;padding:0;margin:.3rem 0;display:flex;flex-wrap:wrap;gap:.3rem 1rem;font-size:.85rem}.line{display:inline-block;width:1.2rem;height:.25rem;border-radius:.1rem;margin-right:.35rem;vertical-align:middle}.depot{display:inline-block;width:.6rem;height:.6rem;border:2px solid #444;background:#fff;margin-right:.35rem;vertical-align:middle}@media (max-width:40rem){.stops thead{display:none}.stops tr{display:grid;grid-template-columns:1.8rem repeat(3,1fr) 1.4fr;border-bottom:1px solid #ddd;padding:.3rem 0}.stops td{border:0;padding:.1rem .2rem}.stops td.n{width:auto;padding-right:.5rem}.stops td.stop{grid-column:2/-1}.stops td:nth-child(3){grid-column:2}.stops td[data-label]::before{content:attr(data-label);display:block;font-size:.7rem;color:#666}}</style>
</head><body><h1>${e(reportTitle(d, L))}</h1>
<p>${e(summary(d, L))}</p>
${d.routes.length > 1 ? mapHtml(d, all, L, L.map) : ""}
${routes}
${unassigned}
</body></html>`;
}
