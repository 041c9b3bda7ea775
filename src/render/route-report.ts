/**
 * The route-optimization report (contract §16) as an HTML page readable on a phone: per route
 * its stops with times, leg distances and durations, the totals, and the unassigned tasks with
 * their reasons. Pure: the result and labels in, a string out; no script, inline CSS only.
 */
import { escapeHtml as e } from "./html";

export type ReportStop = {
  label: string;
  arrival: string;
  start: string;
  departure: string;
  distance_m: number;
  duration_s: number;
};
export type ReportRoute = { label: string; stops: ReportStop[]; distance_m: number; duration_s: number };
export type ReportData = {
  title: string;
  state: string;
  routes: ReportRoute[];
  unassigned: { label: string; reason: string }[];
  distance_m: number;
  duration_s: number;
  timeZone: string;
};

/** Why a task was left unassigned, in words (the HTML and the PDF report say the same). */
export const REASONS: Record<string, string> = {
  unreachable: "no location, or no road to it",
  capacity: "its demand exceeds every vehicle's capacity",
  time_window: "no route can reach it inside its time window",
  shift: "it does not fit in any shift",
};

export const km = (m: number) => `${(m / 1000).toFixed(1)} km`;
export const hm = (s: number) =>
  `${Math.floor(s / 3600)} h ${String(Math.round((s % 3600) / 60)).padStart(2, "0")} min`;

export function timeIn(iso: string, zone: string) {
  return new Intl.DateTimeFormat("en-GB", { timeZone: zone, hour: "2-digit", minute: "2-digit" }).format(
    new Date(iso),
  );
}

export function renderRouteReportHtml(d: ReportData): string {
  const routes = d.routes
    .map(
      (
        r,
      ) => `<section><h2>${e(r.label)}</h2><p>${e(km(r.distance_m))} · ${e(hm(r.duration_s))} · ${r.stops.length} stops</p>
<table><thead><tr><th>#</th><th>Task</th><th>Arrive</th><th>Start</th><th>Leave</th><th>Leg</th></tr></thead><tbody>
${r.stops
  .map(
    (s, i) =>
      `<tr><td>${i + 1}</td><td>${e(s.label)}</td><td>${e(timeIn(s.arrival, d.timeZone))}</td><td>${e(timeIn(s.start, d.timeZone))}</td><td>${e(timeIn(s.departure, d.timeZone))}</td><td>${e(km(s.distance_m))}, ${e(hm(s.duration_s))}</td></tr>`,
  )
  .join("\n")}
</tbody></table></section>`,
    )
    .join("\n");
  const unassigned = d.unassigned.length
    ? `<section><h2>Unassigned</h2><ul>${d.unassigned.map((u) => `<li>${e(u.label)}: ${e(REASONS[u.reason] ?? u.reason)}</li>`).join("")}</ul></section>`
    : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(d.title)}</title>
<style>body{font-family:system-ui,sans-serif;margin:1rem;color:#222}table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{text-align:left;padding:.3rem;border-bottom:1px solid #ddd}section{margin-bottom:1.5rem}h1{font-size:1.3rem}h2{font-size:1.1rem;margin-bottom:.2rem}p{margin:.2rem 0 .6rem;color:#555}</style>
</head><body><h1>${e(d.title)}</h1>
<p>${e(d.state)} · ${d.routes.length} routes · ${e(km(d.distance_m))} · ${e(hm(d.duration_s))} · times in ${e(d.timeZone)}</p>
${routes}
${unassigned}
</body></html>`;
}
