#!/usr/bin/env node
// The solver's distance against VROOM's on the same instances: `node bench/vrp-vroom-ratio.mjs
// RESULTS.json [--vroom bench/vrp-vroom-pdptw-200.json] [--each]`. RESULTS is a `bench:vrp`
// results file (`--out`), the VROOM file one written by bench/vroom-json.mjs. Per class (the
// name before the first `_`): the mean of solver ÷ VROOM distance over the instances both
// solved, its worst, the routes of each and the solver's iterations per second; then all of
// them. The ratio is a mean of per-instance ratios, as bench/VRP.md's VROOM tables give it.
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args.splice(i, 2)[1] : fallback;
};
const vroomPath = opt("vroom", "bench/vrp-vroom-pdptw-200.json");
const each = args.includes("--each");
const [resultsPath] = args.filter((a) => !a.startsWith("--"));
if (!resultsPath) {
  console.error("usage: node bench/vrp-vroom-ratio.mjs RESULTS.json [--vroom FILE] [--each]");
  process.exit(2);
}
const vroom = new Map(JSON.parse(readFileSync(vroomPath, "utf8")).instances.map((r) => [r.name, r]));
const rows = JSON.parse(readFileSync(resultsPath, "utf8")).instances.filter((r) => vroom.has(r.name));
const classes = new Map();
for (const r of rows) {
  const v = vroom.get(r.name);
  const ratio = r.distance / v.distance;
  if (each)
    console.log(
      `${r.name.padEnd(10)} ${r.distance.toFixed(2).padStart(9)} ${v.distance.toFixed(2).padStart(9)}  ${ratio.toFixed(4)}  routes ${r.vehicles}/${v.vehicles}${r.feasible ? "" : "  INFEASIBLE"}`,
    );
  const c = r.name.split("_")[0];
  if (!classes.has(c)) classes.set(c, []);
  classes.get(c).push({
    ratio,
    routes: r.vehicles,
    vroomRoutes: v.vehicles,
    rate: r.iterations_per_second,
    feasible: r.feasible,
  });
}
const line = (name, xs) => {
  const mean = (k) => xs.reduce((s, x) => s + x[k], 0) / xs.length;
  const sum = (k) => xs.reduce((s, x) => s + x[k], 0);
  console.log(
    `${name.padEnd(6)} ${mean("ratio").toFixed(4)} (worst ${Math.max(...xs.map((x) => x.ratio)).toFixed(4)})  routes ${sum("routes")}/${sum("vroomRoutes")}  ${Math.round(mean("rate"))} it/s  ${xs.filter((x) => x.feasible).length} of ${xs.length} feasible`,
  );
};
for (const [c, xs] of [...classes].sort()) line(c, xs);
line("all", [...classes.values()].flat());
