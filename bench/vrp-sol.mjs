// Reads another solver's solution to a Solomon / Gehring & Homberger instance, in the
// CVRPLIB / DIMACS `.sol` text format ("Route #k: c1 c2 …" lines, customers numbered as in
// the instance), and recounts it here: routes, distance with exact legs and with legs
// truncated to one decimal (the DIMACS convention the distance-only bests are counted in),
// capacity, and time windows under both conventions. The gap is to the distance-only best in
// bench/vrptw-distance-bks.json (truncated legs, as that best was counted). It shares no code
// with src/solver or src/solver-check on purpose: a recount of a foreign solution by itself.
//
//   node bench/vrp-sol.mjs INSTANCE.txt SOLUTION.sol [--json]
import { readFileSync } from "node:fs";
import { basename } from "node:path";

const [instancePath, solutionPath] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
if (!instancePath || !solutionPath) {
  console.error("usage: node bench/vrp-sol.mjs INSTANCE.txt SOLUTION.sol [--json]");
  process.exit(2);
}

const lines = readFileSync(instancePath, "utf8").split(/\r?\n/);
const capacity = Number(lines[4].trim().split(/\s+/)[1]);
const nodes = [];
for (const line of lines.slice(9)) {
  const f = line.trim().split(/\s+/).map(Number);
  if (f.length < 7 || f.some(Number.isNaN)) continue;
  const [id, x, y, demand, ready, due, service] = f;
  nodes[id] = { x, y, demand, ready, due, service };
}

const routes = readFileSync(solutionPath, "utf8")
  .split(/\r?\n/)
  .filter((l) => /^Route #\d+:/.test(l))
  .map((l) =>
    l
      .replace(/^Route #\d+:/, "")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number),
  );

// A customer the instance does not have is reported, not followed into the arithmetic below.
const unknown = routes.flat().filter((c) => !Number.isInteger(c) || c < 1 || !nodes[c]);
if (unknown.length > 0) {
  console.error(
    `${solutionPath}: customers not in ${instancePath}: ${[...new Set(unknown)].slice(0, 10).join(", ")}`,
  );
  process.exit(1);
}

const exact = (a, b) => Math.hypot(nodes[a].x - nodes[b].x, nodes[a].y - nodes[b].y);
// DIMACS: the leg in tenths, truncated (what HGS-VRPTW and CVRPLIB's .sol costs use).
const truncated = (a, b) => Math.floor(10 * exact(a, b)) / 10;

const seen = new Set();
const problems = [];
let distanceExact = 0;
let distanceTruncated = 0;
let lateExact = 0;
for (const [r, route] of routes.entries()) {
  let load = 0;
  let prev = 0;
  let timeExact = 0;
  let timeTrunc = 0;
  for (const c of [...route, 0]) {
    if (c !== 0) {
      if (seen.has(c)) problems.push(`customer ${c} served twice`);
      seen.add(c);
      load += nodes[c].demand;
    }
    distanceExact += exact(prev, c);
    distanceTruncated += truncated(prev, c);
    const serviceBefore = prev === 0 ? 0 : nodes[prev].service;
    timeExact = Math.max(nodes[c].ready, timeExact + serviceBefore + exact(prev, c));
    timeTrunc = Math.max(nodes[c].ready, timeTrunc + serviceBefore + truncated(prev, c));
    // Windows are checked under the convention the solver optimised in (truncated legs);
    // stops late only with exact legs are counted apart, as for the published bests.
    if (timeTrunc > nodes[c].due + 1e-9) problems.push(`route ${r + 1}: customer ${c} late`);
    else if (timeExact > nodes[c].due + 1e-9) lateExact++;
    prev = c;
  }
  if (load > capacity) problems.push(`route ${r + 1}: load ${load} > ${capacity}`);
}
for (let c = 1; c < nodes.length; c++) if (!seen.has(c)) problems.push(`customer ${c} not served`);

const name = basename(instancePath).replace(/\.txt$/, "");
const bks = JSON.parse(readFileSync(new URL("./vrptw-distance-bks.json", import.meta.url), "utf8"))[name];
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const result = {
  instance: name,
  routes: routes.length,
  distance_exact: round(distanceExact),
  distance_truncated: round(distanceTruncated, 1),
  feasible: problems.length === 0,
  late_with_exact_legs: lateExact,
  best_distance: bks?.distance ?? null,
  best_routes: bks?.routes ?? null,
  gap_truncated_percent: bks ? round((100 * (distanceTruncated - bks.distance)) / bks.distance) : null,
  gap_exact_percent: bks ? round((100 * (distanceExact - bks.distance)) / bks.distance) : null,
  problems: problems.slice(0, 10),
};
if (process.argv.includes("--json")) console.log(JSON.stringify(result));
else
  console.log(
    `${name}: ${result.routes} routes (best ${result.best_routes}), ${result.distance_truncated} truncated / ${result.distance_exact} exact, gap ${result.gap_truncated_percent} % (${result.gap_exact_percent} % exact), ${result.feasible ? "feasible" : `INFEASIBLE: ${problems.slice(0, 3).join("; ")}`}, ${lateExact} late with exact legs`,
  );
process.exit(problems.length === 0 ? 0 : 1);
