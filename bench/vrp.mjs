#!/usr/bin/env node
// `npm run bench:vrp [-- --instances <folder>] [--seconds N] [--only C101,R201]`: solves every
// Solomon-format instance of a folder (default ../shared/bench/vrptw/solomon) with total distance
// as the only objective, checks each solution with the independent checker (src/solver-check),
// prints a table and writes bench/vrp-results.json. One thread. The solver's budget is in
// iterations (a Worker's clock does not move while it computes); here it is given the clock
// instead (`progress`, read every 100 iterations), so each instance stops at its seconds,
// construction included, however loaded the machine.
//
// Li & Lim's pick-up-and-delivery files (a first line `K Q S`) are read as well, each request a
// shipment (pick-up and drop-off on one route, pick-up first), compared with their BKS.json.
//
//   --rate                   iterations per second on pairs against the same stops as single
//                            visits (Li & Lim instances, --seconds each, both runs)
//   --city [--visits 1000]   a generated city instance (bench/vrp-city.ts)
//   --cpu                    the budget in the process's CPU time instead of the clock
//   --memory                 the heap a 2,000-stop city instance takes, matrices included
//   --workerd                CPU milliseconds per iteration in workerd (not Node) at 100, 1,000
//                            and 2,000 stops, from the runtime's CPU time in /proc
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { getHeapStatistics } from "node:v8";
import { build } from "esbuild";
import { cpuMs, workerdPids } from "./lib/harness.mjs";
import { seed, tuning } from "./vrp-tuning.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const folder = resolve(opt("instances", "../shared/bench/vrptw/solomon"));
const seconds = Number(opt("seconds", "10"));
const only = opt("only", "")?.split(",").filter(Boolean) ?? [];
const out = opt("out", "bench/vrp-results.json");
// Tuning knobs and VRP_SEED: bench/vrp-tuning.mjs. VRP_FLEET=N keeps only the first N vehicles
// of each instance (a fleet cap, for experiments).
const fleetCap = process.env.VRP_FLEET ? Number(process.env.VRP_FLEET) : null;

const dir = mkdtempSync(join(tmpdir(), "vrp-"));
const entry = `export { solve } from "./src/solver/index.ts"; export { parseSolomon } from "./src/solver/solomon.ts"; export { isLiLim, parseLiLim } from "./src/solver/lilim.ts"; export { checkSolution } from "./src/solver-check/index.ts"; export { cityInstance } from "./bench/vrp-city.ts";`;
await build({
  stdin: { contents: entry, resolveDir: process.cwd(), loader: "ts" },
  bundle: true,
  format: "esm",
  platform: "node",
  outfile: join(dir, "solver.mjs"),
  logLevel: "error",
});
const { solve, parseSolomon, isLiLim, parseLiLim, checkSolution, cityInstance } = await import(
  pathToFileURL(join(dir, "solver.mjs")).href
);

// `--cpu`: the budget is the process's CPU time, not the clock (on a machine shared with other
// work, two code versions then get the same computation however loaded it is).
const cpuClock = args.includes("--cpu");
const cpuSince = (c0) => {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1e6;
};

/** One solve on the clock: the solver reads the fraction of `budget` seconds spent. */
function timed(instance, budget = seconds) {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const solution = solve(instance, {
    ...tuning,
    seed,
    progress: cpuClock ? () => cpuSince(c0) / budget : () => (performance.now() - t0) / (budget * 1000),
  });
  return {
    solution,
    iterations: solution.stats.iterations,
    seconds: (performance.now() - t0) / 1000,
    cpuSeconds: cpuSince(c0),
  };
}

/** Heap in use (V8's heap plus array buffers, where typed arrays live), MB. */
const heapMb = () => (getHeapStatistics().used_heap_size + process.memoryUsage().arrayBuffers) / 2 ** 20;

if (args.includes("--city")) {
  const visits = Number(opt("visits", "1000"));
  const instance = cityInstance(visits, Math.max(5, Math.round(visits / 20)), 7);
  const { solution, iterations, seconds: s } = timed(instance, Number(opt("seconds", "30")));
  const problems = checkSolution(instance, solution);
  console.log(
    `city ${visits} visits / ${instance.vehicles.length} vehicles: ${solution.routes.length} routes, ${solution.unassigned.length} unassigned, distance ${(solution.distance / 1000).toFixed(1)} km, ${iterations} iterations in ${s.toFixed(1)} s (${((s * 1000) / iterations).toFixed(3)} ms per iteration, construction included), ${problems.length ? `INFEASIBLE: ${problems[0]}` : "feasible"}`,
  );
  process.exit(problems.length ? 1 : 0);
}

if (args.includes("--memory")) {
  // The heap before the instance, with it (its two matrices), and the peak while it is solved.
  const visits = Number(opt("visits", "2000"));
  const before = heapMb();
  const instance = cityInstance(visits, Math.round(visits / 20), 7);
  const withInstance = heapMb();
  let peak = withInstance;
  const solution = solve(instance, { seed: 1, iterations: Number(opt("iterations", "3000")) }, () => {
    peak = Math.max(peak, heapMb());
  });
  peak = Math.max(peak, heapMb());
  const problems = checkSolution(instance, solution);
  console.log(
    `${visits} stops: matrices ${(instance.distances.byteLength / 2 ** 20).toFixed(1)} + ${(instance.durations.byteLength / 2 ** 20).toFixed(1)} MB (${instance.distances.constructor.name}); heap ${before.toFixed(1)} MB before, ${withInstance.toFixed(1)} MB with the instance, peak ${peak.toFixed(1)} MB while solving (${(peak - before).toFixed(1)} MB for the instance and its solve); ${solution.routes.length} routes, ${problems.length ? `INFEASIBLE: ${problems[0]}` : "feasible"}`,
  );
  process.exit(problems.length ? 1 : 0);
}

if (args.includes("--workerd")) {
  await perIterationInWorkerd();
  process.exit(0);
}

// Beside the instances, else one folder up (the Li & Lim sets share ../shared/bench/pdptw/BKS.json).
const bksPath = [join(folder, "BKS.json"), join(folder, "..", "BKS.json")].find(existsSync) ?? "";
const bks = bksPath ? JSON.parse(readFileSync(bksPath, "utf8")) : {};
/** The best known distance: Solomon's distance-only entry, else the hierarchical one (Homberger's, Li & Lim's). */
const bestKnown = (name) =>
  bks[`${name}_distance`]?.best_known_cost ?? bks[name]?.best_known_cost ?? bks[name]?.distance ?? null;
const files = readdirSync(folder)
  .filter((f) => /\.txt$/i.test(f))
  .filter((f) => !only.length || only.includes(f.replace(/\.txt$/i, "")))
  .sort();
/** An instance file in either format: Solomon's (Gehring & Homberger's) or Li & Lim's pick-up-and-delivery. */
function load(file) {
  const text = readFileSync(join(folder, file), "utf8");
  const name = file.replace(/\.txt$/i, "");
  const instance = isLiLim(text) ? parseLiLim(text, "distance", name) : parseSolomon(text);
  if (fleetCap !== null) instance.vehicles = instance.vehicles.slice(0, fleetCap);
  return { name, instance };
}
// The distance-only best known (fleet free; DIMACS / CVRPLIB: legs truncated to one decimal), where
// one is known: the gap an outside judge measures, beside the hierarchical one (fewest vehicles first).
const distanceBks = JSON.parse(readFileSync(new URL("./vrptw-distance-bks.json", import.meta.url), "utf8"));
/** The solution's distance with each leg truncated to one decimal (the DIMACS convention). */
function truncatedDistance(instance, solution) {
  const n = instance.locations;
  const d = instance.distances;
  const at = new Map(instance.jobs.map((j) => [j.id, j.location]));
  let sum = 0;
  for (const r of solution.routes) {
    const v = instance.vehicles.find((x) => x.id === r.vehicle);
    let prev = v.start;
    for (const s of r.stops) {
      const l = at.get(s.job);
      sum += Math.floor(d[prev * n + l] * 10 + 1e-9) / 10;
      prev = l;
    }
    sum += Math.floor(d[prev * n + v.end] * 10 + 1e-9) / 10;
  }
  return sum;
}

if (args.includes("--rate")) {
  await rates();
  process.exit(0);
}

const rows = [];
for (const file of files) {
  const { name, instance } = load(file);
  const { solution, iterations, seconds: s, cpuSeconds } = timed(instance);
  const problems = checkSolution(instance, solution);
  const best = bestKnown(name);
  const gap = best ? ((solution.distance - best) / best) * 100 : null;
  const dBest = distanceBks[name]?.distance ?? null;
  const truncated = instance.shipments?.length ? null : truncatedDistance(instance, solution);
  const pct = (x) => Number((((x - dBest) / dBest) * 100).toFixed(2));
  const row = {
    name,
    pairs: instance.shipments?.length ?? 0,
    distance: Number(solution.distance.toFixed(2)),
    vehicles: solution.routes.length,
    best_known: best,
    best_known_vehicles: bks[name]?.solved_with_vehicles ?? bks[name]?.vehicles ?? null,
    seconds: Number(s.toFixed(2)),
    cpu_seconds: Number(cpuSeconds.toFixed(2)),
    feasible: problems.length === 0 && solution.unassigned.length === 0,
    gap_percent: gap === null ? null : Number(gap.toFixed(2)),
    distance_truncated: truncated === null ? null : Number(truncated.toFixed(1)),
    distance_best_known: dBest,
    distance_best_known_vehicles: distanceBks[name]?.routes ?? null,
    // To the distance-only best known: our distance as is, and with legs truncated as it was.
    distance_gap_percent: dBest === null ? null : pct(solution.distance),
    distance_gap_truncated_percent: dBest === null || truncated === null ? null : pct(truncated),
    iterations,
    ...(solution.stats.fleet ? { fleet_minimisation: solution.stats.fleet } : {}),
    iterations_per_second: Math.round(iterations / s),
    routes: solution.routes.map((r) => r.stops.map((x) => Number(x.job))),
  };
  rows.push(row);
  console.log(
    `${name.padEnd(10)} ${String(row.distance).padStart(9)} ${String(row.vehicles).padStart(3)} veh  gap ${row.gap_percent === null ? "   n/a" : `${row.gap_percent.toFixed(2).padStart(6)}%`}${row.distance_gap_percent === null ? "" : `  dist-gap ${row.distance_gap_percent.toFixed(2).padStart(6)}% (truncated ${row.distance_gap_truncated_percent.toFixed(2)}%)`}  ${row.seconds.toFixed(2).padStart(6)} s  ${String(iterations).padStart(8)} it (${String(row.iterations_per_second).padStart(6)}/s)${solution.stats.fleet ? ` fleet phase ${solution.stats.fleet.routes} routes ${solution.stats.fleet.distance?.toFixed(2)} (last at ${solution.stats.fleet.lastFleet}) in ${solution.stats.fleet.iterations} it` : ""}  ${row.feasible ? "feasible" : `INFEASIBLE ${problems[0] ?? `${solution.unassigned.length} unassigned`}`}`,
  );
}
const gaps = rows.map((r) => r.gap_percent).filter((g) => g !== null);
const summary = {
  instances: rows.length,
  feasible: rows.filter((r) => r.feasible).length,
  mean_gap_percent: gaps.length ? Number((gaps.reduce((a, b) => a + b, 0) / gaps.length).toFixed(2)) : null,
  // Where the solution uses the best known solution's fleet: the hierarchical best known is then
  // a fair distance reference (with more vehicles a distance-only solver may land below it).
  ...sameFleetGap(rows),
  ...distanceGap(rows),
  max_gap_percent: gaps.length ? Number(Math.max(...gaps).toFixed(2)) : null,
  vehicles: rows.reduce((a, r) => a + r.vehicles, 0),
  best_known_vehicles: rows.every((r) => r.best_known_vehicles !== null)
    ? rows.reduce((a, r) => a + r.best_known_vehicles, 0)
    : null,
  mean_distance: Number((rows.reduce((a, r) => a + r.distance, 0) / Math.max(1, rows.length)).toFixed(2)),
  seconds_budget: seconds,
  budget_clock: cpuClock ? "process CPU time" : "wall clock",
  mean_seconds: Number((rows.reduce((a, r) => a + r.seconds, 0) / Math.max(1, rows.length)).toFixed(2)),
  max_seconds: Number(Math.max(0, ...rows.map((r) => r.seconds)).toFixed(2)),
  mean_iterations_per_second: Math.round(
    rows.reduce((a, r) => a + r.iterations_per_second, 0) / Math.max(1, rows.length),
  ),
  max_over_budget_percent: Number(
    Math.max(0, ...rows.map((r) => ((r.seconds - seconds) / seconds) * 100)).toFixed(2),
  ),
};
console.log(JSON.stringify(summary));
writeFileSync(out, `${JSON.stringify({ instances: rows, summary }, null, 1)}\n`);

function distanceGap(rows) {
  const known = rows.filter((r) => r.distance_gap_percent !== null);
  if (!known.length) return {};
  const mean = (k) => Number((known.reduce((a, r) => a + r[k], 0) / known.length).toFixed(2));
  return {
    distance_bks_instances: known.length,
    mean_distance_gap_percent: mean("distance_gap_percent"),
    mean_distance_gap_truncated_percent: mean("distance_gap_truncated_percent"),
  };
}

function sameFleetGap(rows) {
  const same = rows.filter((r) => r.gap_percent !== null && r.vehicles === r.best_known_vehicles);
  if (!same.length || same.length === rows.length) return {};
  return {
    same_fleet_instances: same.length,
    same_fleet_mean_gap_percent: Number(
      (same.reduce((a, r) => a + r.gap_percent, 0) / same.length).toFixed(2),
    ),
  };
}

/**
 * `--rate`: iterations per second on pick-up-and-delivery pairs against single stops at the same
 * size. Each Li & Lim instance is solved twice for `--seconds`: as published (every stop in a
 * pair), and with the same stops as standalone visits (same places, windows, service times and
 * pick-up demands, no pairing), so the only difference is the pairs.
 */
async function rates() {
  const results = [];
  for (const file of files) {
    const { name, instance } = load(file);
    if (!instance.shipments?.length) continue;
    const singles = {
      ...instance,
      shipments: [],
      // The pick-up's demand rides from the depot instead (the drop-off's is 0), so each route
      // carries at least what its pairs' pick-ups would have.
      jobs: instance.shipments.flatMap((p) => [
        { ...p.pickup, demand: p.demand },
        { ...p.delivery, demand: [0] },
      ]),
    };
    const a = timed(instance);
    const b = timed(singles);
    const row = {
      name,
      stops: instance.shipments.length * 2,
      pairs_per_second: Math.round(a.iterations / a.seconds),
      singles_per_second: Math.round(b.iterations / b.seconds),
    };
    row.ratio = Number((row.singles_per_second / row.pairs_per_second).toFixed(2));
    results.push(row);
    console.log(
      `${name.padEnd(10)} ${row.stops} stops: pairs ${row.pairs_per_second}/s, the same stops single ${row.singles_per_second}/s (singles ÷ pairs ${row.ratio})`,
    );
  }
  const mean = (k) => results.reduce((s, r) => s + r[k], 0) / Math.max(1, results.length);
  console.log(
    JSON.stringify({
      instances: results.length,
      seconds_each: seconds,
      mean_pairs_per_second: Math.round(mean("pairs_per_second")),
      mean_singles_per_second: Math.round(mean("singles_per_second")),
      mean_ratio: Number(mean("ratio").toFixed(2)),
      max_ratio: Math.max(0, ...results.map((r) => r.ratio)),
    }),
  );
}

/**
 * CPU milliseconds per iteration in workerd: a Worker that generates a city instance of n stops
 * and solves it with a given budget runs under `wrangler dev`; the runtime's CPU time (user +
 * system of its workerd processes, /proc) is read around each request, and the per-iteration
 * figure is (CPU at `iterations` − CPU at 0) ÷ iterations, so the instance, its compilation and
 * the construction are left out (and reported apart). Inside a Worker the clock does not move
 * while it computes, which is why this is measured from outside.
 */
async function perIterationInWorkerd() {
  const worker = join(dir, "worker");
  await build({
    stdin: {
      contents: `import { solve } from "./src/solver/index.ts"; import { cityInstance } from "./bench/vrp-city.ts";
export default { async fetch(request) {
  const q = new URL(request.url).searchParams;
  const n = Number(q.get("n"));
  const instance = cityInstance(n, Math.max(5, Math.round(n / 20)), 7);
  const s = solve(instance, { seed: 1, iterations: Number(q.get("iterations")) });
  return Response.json({ iterations: s.stats.iterations, routes: s.routes.length, distance: s.distance, unassigned: s.unassigned.length });
} };`,
      resolveDir: process.cwd(),
      loader: "ts",
    },
    bundle: true,
    format: "esm",
    platform: "neutral",
    outfile: join(worker, "index.js"),
    logLevel: "error",
  });
  writeFileSync(
    join(worker, "wrangler.jsonc"),
    JSON.stringify({ name: "vrp-bench", main: "index.js", compatibility_date: "2026-10-01" }),
  );
  const port = 8797;
  const child = spawn(
    "npx",
    [
      "wrangler",
      "dev",
      "-c",
      join(worker, "wrangler.jsonc"),
      "--port",
      String(port),
      "--ip",
      "127.0.0.1",
    ].concat(["--log-level", "error", "--show-interactive-dev-session=false"]),
    { stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, CI: "true" }, detached: true },
  );
  const stop = () => {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {}
  };
  process.on("exit", stop);
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 240; i++) {
    try {
      await fetch(url);
      break;
    } catch {}
    await new Promise((r) => setTimeout(r, 500));
  }
  const pids = workerdPids(child.pid);
  const run = async (n, iterations) => {
    const c0 = cpuMs(pids);
    const body = await (await fetch(`${url}?n=${n}&iterations=${iterations}`)).json();
    return { cpu: cpuMs(pids) - c0, ...body };
  };
  // Long enough for /proc's 10 ms ticks to be noise, and for the routes to have filled up.
  const sizes = [
    [100, 50_000],
    [1000, 50_000],
    [2000, 50_000],
  ];
  const results = [];
  for (const [n, iterations] of sizes) {
    await run(n, 0); // warm-up: the first request compiles the code
    const base = await run(n, 0);
    const full = await run(n, iterations);
    const perIteration = (full.cpu - base.cpu) / iterations;
    results.push({ stops: n, construction_cpu_ms: base.cpu, iterations, cpu_ms_per_iteration: perIteration });
    console.log(
      `workerd, ${n} stops: ${perIteration.toFixed(3)} CPU ms per iteration (${iterations} iterations: ${full.cpu} ms; instance + construction ${base.cpu} ms; ${full.routes} routes, ${full.unassigned} unassigned)`,
    );
  }
  stop();
  writeFileSync(join("bench", "vrp-workerd.json"), `${JSON.stringify(results, null, 1)}\n`);
}
