#!/usr/bin/env node
// Fixed-budget runs for exact speed-ups: `node bench/vrp-fixed.mjs --iterations N [--src DIR]
// FILE...` solves each instance with seed VRP_SEED (default 1) and N iterations, and prints the
// distance, the routes, a hash of the routes (two code versions that do the same search print
// the same hash) and the process's CPU time for the solve (process.cpuUsage, not the clock: the
// machine is shared, and CPU time moves less with its load).
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args.splice(i, 2)[1] : fallback;
};
const iterations = Number(opt("iterations", "20000"));
// `--cpu-seconds N`: a budget of the process's CPU time instead (the solver reads it as its clock).
const cpuSeconds = Number(opt("cpu-seconds", "0"));
// VRP_TAILS: the share of tail-exchange iterations (the solver's default without it).
// VRP_TW: penalised time windows in the fleet phase (0: off, main's search before session 7);
// VRP_TW_FLEETW, VRP_FLEETMIN, VRP_FLEETSTOPS, VRP_NEAR_SHARE as in bench/vrp.mjs (VRP_NEAR_SHARE=0:
// the neighbourhood of 30 throughout, the search before session 8's wider one).
// VRP_RELABEL=0: the locations in their own order (session 8's relabelling off; the same search).
// VRP_LMAX: SISR's L_max (maxStringLength).
const tuning = {
  ...(process.env.VRP_LMAX ? { maxStringLength: Number(process.env.VRP_LMAX) } : {}),
  ...(process.env.VRP_TAILS ? { tailExchange: Number(process.env.VRP_TAILS) } : {}),
  ...(process.env.VRP_TW ? { timeWarp: Number(process.env.VRP_TW) } : {}),
  ...(process.env.VRP_NEAR_SHARE ? { shortRouteNeighbourhood: Number(process.env.VRP_NEAR_SHARE) } : {}),
  ...(process.env.VRP_TW_FLEETW ? { timeWarpFleetWeight: Number(process.env.VRP_TW_FLEETW) } : {}),
  ...(process.env.VRP_FLEETMIN ? { fleetMinimisation: Number(process.env.VRP_FLEETMIN) } : {}),
  ...(process.env.VRP_FLEETSTOPS ? { fleetMaxStops: Number(process.env.VRP_FLEETSTOPS) } : {}),
  ...(process.env.VRP_RELABEL ? { relabel: process.env.VRP_RELABEL !== "0" } : {}),
};
const src = resolve(opt("src", "."));
const seed = Number(process.env.VRP_SEED || 1);
const dir = mkdtempSync(join(tmpdir(), "vrp-fixed-"));
await build({
  stdin: {
    contents: `export { solve } from "./src/solver/index.ts"; export { parseSolomon } from "./src/solver/solomon.ts"; export { isLiLim, parseLiLim } from "./src/solver/lilim.ts";`,
    resolveDir: src,
    loader: "ts",
  },
  bundle: true,
  format: "esm",
  platform: "node",
  outfile: join(dir, "solver.mjs"),
  logLevel: "error",
});
const { solve, parseSolomon, isLiLim, parseLiLim } = await import(
  pathToFileURL(join(dir, "solver.mjs")).href
);
for (const file of args) {
  const text = readFileSync(file, "utf8");
  const name = basename(file).replace(/\.txt$/i, "");
  const instance = isLiLim(text) ? parseLiLim(text, "distance", name) : parseSolomon(text);
  const c0 = process.cpuUsage();
  const cpuNow = () => {
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1e6;
  };
  const s = solve(
    instance,
    cpuSeconds ? { ...tuning, seed, progress: () => cpuNow() / cpuSeconds } : { ...tuning, seed, iterations },
  );
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / 1000;
  const hash = createHash("sha1")
    .update(JSON.stringify(s.routes.map((r) => r.stops.map((x) => x.job))))
    .digest("hex")
    .slice(0, 10);
  console.log(
    `${name.padEnd(10)} ${s.distance.toFixed(4).padStart(12)} routes ${String(s.routes.length).padStart(3)} unassigned ${s.unassigned.length} hash ${hash} cpu ${(cpu / 1000).toFixed(2)} s (${(cpu / s.stats.iterations).toFixed(4)} ms/it, ${s.stats.iterations} it)`,
  );
}
