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
import { seed, tuning } from "./vrp-tuning.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args.splice(i, 2)[1] : fallback;
};
const iterations = Number(opt("iterations", "20000"));
// `--cpu-seconds N`: a budget of the process's CPU time instead (the solver reads it as its clock).
const cpuSeconds = Number(opt("cpu-seconds", "0"));
// Tuning knobs and VRP_SEED: bench/vrp-tuning.mjs (the same as bench/vrp.mjs).
const src = resolve(opt("src", "."));
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
