#!/usr/bin/env node
// `npm run bench:vrp [-- --instances <folder>] [--seconds N] [--only C101,R201]`: solves every
// Solomon-format instance of a folder (default ../shared/bench/vrptw/solomon) with total distance
// as the only objective, checks each solution with the independent checker (src/solver-check),
// prints a table and writes bench/vrp-results.json. The solver takes an iteration budget; here
// it runs in chunks of iterations until the seconds are spent (the result is the one of the
// iterations run, which are printed too), on one thread.
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const folder = resolve(opt("instances", "../shared/bench/vrptw/solomon"));
const seconds = Number(opt("seconds", "10"));
const only = opt("only", "")?.split(",").filter(Boolean) ?? [];
const out = opt("out", "bench/vrp-results.json");
const city = args.includes("--city");
// Tuning knobs (the defaults are the solver's): VRP_CBAR, VRP_T0, VRP_TF.
const tuning = {
  ...(process.env.VRP_CBAR ? { averageRemoved: Number(process.env.VRP_CBAR) } : {}),
  ...(process.env.VRP_T0
    ? { temperatures: [Number(process.env.VRP_T0), Number(process.env.VRP_TF || 1)] }
    : {}),
};

const dir = mkdtempSync(join(tmpdir(), "vrp-"));
await build({
  stdin: {
    contents: `export { solve } from "./src/solver/index.ts"; export { parseSolomon } from "./src/solver/solomon.ts"; export { checkSolution } from "./src/solver-check/index.ts"; export { cityInstance } from "./bench/vrp-city.ts";`,
    resolveDir: process.cwd(),
    loader: "ts",
  },
  bundle: true,
  format: "esm",
  platform: "node",
  outfile: join(dir, "solver.mjs"),
  logLevel: "error",
});
const { solve, parseSolomon, checkSolution, cityInstance } = await import(
  pathToFileURL(join(dir, "solver.mjs")).href
);

/**
 * Iterations per second, measured on the instance (a solve of `probe` iterations minus the
 * construction alone), then one solve with as many iterations as fit in the seconds.
 */
function timed(instance, safety = 0.9) {
  const probe = 300;
  const t0 = performance.now();
  solve(instance, { ...tuning, seed: 1, iterations: 0 });
  const construction = performance.now() - t0;
  const t1 = performance.now();
  solve(instance, { ...tuning, seed: 1, iterations: probe });
  const perSecond = probe / Math.max(1e-3, (performance.now() - t1 - construction) / 1000);
  const iterations = Math.max(probe, Math.floor(perSecond * (seconds - construction / 1000) * safety));
  const t2 = performance.now();
  const solution = solve(instance, { ...tuning, seed: 1, iterations });
  return { solution, iterations, seconds: (performance.now() - t2) / 1000 };
}

if (city) {
  const instance = cityInstance(1000, 50, 7);
  // Iterations get slower as routes fill up: a wider margin keeps the run inside its seconds.
  const { solution, iterations, seconds: s } = timed(instance, 0.55);
  const problems = checkSolution(instance, solution);
  console.log(`city: ${((s * 1000) / iterations).toFixed(2)} ms per iteration (construction included)`);
  console.log(
    `city 1000 visits / 50 vehicles: ${solution.routes.length} routes, ${solution.unassigned.length} unassigned, distance ${(solution.distance / 1000).toFixed(1)} km, ${iterations} iterations in ${s.toFixed(1)} s, ${problems.length ? `INFEASIBLE: ${problems[0]}` : "feasible"}`,
  );
  process.exit(problems.length ? 1 : 0);
}

const bksPath = join(folder, "BKS.json");
const bks = existsSync(bksPath) ? JSON.parse(readFileSync(bksPath, "utf8")) : {};
const files = readdirSync(folder)
  .filter((f) => /\.txt$/i.test(f))
  .filter((f) => !only.length || only.includes(f.replace(/\.txt$/i, "")))
  .sort();
const rows = [];
for (const file of files) {
  const instance = parseSolomon(readFileSync(join(folder, file), "utf8"));
  const name = file.replace(/\.txt$/i, "");
  const { solution, iterations, seconds: s } = timed(instance);
  const problems = checkSolution(instance, solution);
  const best = bks[`${name}_distance`]?.best_known_cost ?? null;
  const gap = best ? ((solution.distance - best) / best) * 100 : null;
  const row = {
    name,
    distance: Number(solution.distance.toFixed(2)),
    vehicles: solution.routes.length,
    seconds: Number(s.toFixed(2)),
    feasible: problems.length === 0 && solution.unassigned.length === 0,
    gap_percent: gap === null ? null : Number(gap.toFixed(2)),
    iterations,
    routes: solution.routes.map((r) => r.stops.map((x) => Number(x.job))),
  };
  rows.push(row);
  console.log(
    `${name.padEnd(8)} ${String(row.distance).padStart(9)} ${String(row.vehicles).padStart(3)} veh  gap ${row.gap_percent === null ? "   n/a" : `${row.gap_percent.toFixed(2).padStart(6)}%`}  ${row.seconds.toFixed(1).padStart(5)} s  ${String(iterations).padStart(8)} it  ${row.feasible ? "feasible" : `INFEASIBLE ${problems[0] ?? `${solution.unassigned.length} unassigned`}`}`,
  );
}
const gaps = rows.map((r) => r.gap_percent).filter((g) => g !== null);
const summary = {
  instances: rows.length,
  feasible: rows.filter((r) => r.feasible).length,
  mean_gap_percent: gaps.length ? Number((gaps.reduce((a, b) => a + b, 0) / gaps.length).toFixed(2)) : null,
  max_gap_percent: gaps.length ? Number(Math.max(...gaps).toFixed(2)) : null,
  mean_seconds: Number((rows.reduce((a, r) => a + r.seconds, 0) / Math.max(1, rows.length)).toFixed(2)),
  max_seconds: Number(Math.max(0, ...rows.map((r) => r.seconds)).toFixed(2)),
};
console.log(JSON.stringify(summary));
writeFileSync(out, `${JSON.stringify({ instances: rows, summary }, null, 1)}\n`);
