#!/usr/bin/env node
// Runs VROOM (https://github.com/VROOM-Project/vroom, built apart: never part of this repo) on
// instances in Solomon's format (or Li & Lim's PDPTW format, each request a shipment), to compare with the service's solver on the same instances:
//
//   node bench/vroom-json.mjs <instance.txt>             # prints VROOM's JSON input
//   node bench/vroom-json.mjs --vroom /tmp/vroom/bin/vroom --instances <folder> \
//     [--only c2_gen_31] [--x 5] [--out bench/vroom-1000.json]
//
// The input: one vehicle type, as many as the instance's fleet, with its capacity and the
// depot's window as the shift; each customer a job with its demand (`delivery`), service time
// and window; Euclidean distances as a custom `durations` matrix (VROOM's cost is then the
// travel time, here equal to the distance). VROOM takes integers, so every time and distance
// is multiplied by 1,000, and the legs rounded up (a solution feasible with them is feasible
// with the exact ones). Each run is `vroom -x <x> -t 1` (one thread, as the issue's figures);
// its routes are then re-timed with the exact Euclidean legs, their distance summed unrounded,
// and checked by the independent checker (src/solver-check), as the solver's are.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const SCALE = 1000;

/** Solomon's text: fleet, capacity and the customer rows (customer 0 is the depot). */
export function readSolomon(text) {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  const vehicleAt = lines.findIndex((l) => /^VEHICLE/i.test(l));
  const [fleet, capacity] = lines
    .slice(vehicleAt + 1)
    .find((l) => /^\d/.test(l))
    .split(/\s+/)
    .map(Number);
  const customerAt = lines.findIndex((l) => /^CUSTOMER/i.test(l));
  const rows = lines
    .slice(customerAt + 1)
    .filter((l) => /^\d/.test(l))
    .map((l) => l.split(/\s+/).map(Number));
  return { fleet, capacity, rows };
}

export function vroomInput({ fleet, capacity, rows }) {
  const durations = rows.map((a) =>
    rows.map((b) => Math.ceil(Math.hypot(a[1] - b[1], a[2] - b[2]) * SCALE - 1e-6)),
  );
  const depot = rows[0];
  return {
    vehicles: Array.from({ length: fleet }, (_, i) => ({
      id: i + 1,
      start_index: 0,
      end_index: 0,
      capacity: [capacity],
      time_window: [depot[4] * SCALE, depot[5] * SCALE],
    })),
    jobs: rows.slice(1).map((r, i) => ({
      id: r[0],
      location_index: i + 1,
      service: r[6] * SCALE,
      delivery: [r[3]],
      time_windows: [[r[4] * SCALE, r[5] * SCALE]],
    })),
    matrices: { car: { durations } },
  };
}

/**
 * Li & Lim's PDPTW instance (parsed by the solver's own reader, src/solver/lilim.ts) as VROOM's
 * input: each request a shipment (pick-up and delivery, `amount` its demand), the same fleet,
 * scale and rounded-up legs as for Solomon's. The published sets have speed 1 (time = distance).
 */
export function vroomInputLiLim(instance) {
  if (instance.durations !== instance.distances) throw new Error("Only speed 1 is supported.");
  const n = instance.locations;
  const durations = Array.from({ length: n }, (_, a) =>
    Array.from({ length: n }, (_, b) => Math.ceil(instance.distances[a * n + b] * SCALE - 1e-6)),
  );
  const step = (j) => ({
    id: Number(j.id),
    location_index: j.location,
    service: j.service * SCALE,
    time_windows: [[j.timeWindow[0] * SCALE, j.timeWindow[1] * SCALE]],
  });
  return {
    vehicles: instance.vehicles.map((v, i) => ({
      id: i + 1,
      start_index: v.start,
      end_index: v.end,
      capacity: v.capacity,
      time_window: [v.shiftStart * SCALE, v.shiftEnd * SCALE],
    })),
    shipments: instance.shipments.map((s) => ({
      amount: s.demand,
      pickup: step(s.pickup),
      delivery: step(s.delivery),
    })),
    matrices: { car: { durations } },
  };
}

async function main() {
  const args = process.argv.slice(2);
  const opt = (name, fallback) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : fallback;
  };
  const vroom = opt("vroom", "");
  if (!vroom) {
    const input = vroomInput(readSolomon(readFileSync(args[0], "utf8")));
    process.stdout.write(JSON.stringify(input));
    return;
  }
  const { build } = await import("esbuild");
  const dir = mkdtempSync(join(tmpdir(), "vroom-"));
  await build({
    stdin: {
      contents: `export { parseSolomon } from "./src/solver/solomon.ts"; export { isLiLim, parseLiLim } from "./src/solver/lilim.ts"; export { checkSolution } from "./src/solver-check/index.ts";`,
      resolveDir: process.cwd(),
      loader: "ts",
    },
    bundle: true,
    format: "esm",
    platform: "node",
    outfile: join(dir, "check.mjs"),
    logLevel: "error",
  });
  const { parseSolomon, isLiLim, parseLiLim, checkSolution } = await import(
    pathToFileURL(join(dir, "check.mjs")).href
  );
  const folder = resolve(opt("instances", "bench/vrptw-1000"));
  const only = opt("only", "").split(",").filter(Boolean);
  const x = opt("x", "5");
  const out = opt("out", "");
  const rows = [];
  for (const file of readdirSync(folder)
    .filter((f) => /\.txt$/i.test(f))
    .sort()) {
    const name = file.replace(/\.txt$/i, "");
    if (only.length && !only.includes(name)) continue;
    const text = readFileSync(join(folder, file), "utf8");
    const liLim = isLiLim(text);
    const instance = liLim ? parseLiLim(text, "distance", name) : parseSolomon(text);
    const input = liLim ? vroomInputLiLim(instance) : vroomInput(readSolomon(text));
    const inPath = join(dir, `${name}.json`);
    writeFileSync(inPath, JSON.stringify(input));
    // /usr/bin/time reports the CPU seconds (user + system) beside the wall time.
    const outPath = join(dir, `${name}.out.json`);
    const timePath = join(dir, `${name}.time`);
    const t0 = performance.now();
    const run = spawnSync(
      "/usr/bin/time",
      ["-f", "%U %S", "-o", timePath, vroom, "-i", inPath, "-o", outPath, "-x", x, "-t", "1"],
      { encoding: "utf8" },
    );
    const seconds = (performance.now() - t0) / 1000;
    const [user, sys] = readFileSync(timePath, "utf8").trim().split(/\s+/).slice(-2).map(Number);
    let answer = {};
    try {
      answer = JSON.parse(readFileSync(outPath, "utf8"));
    } catch {}
    if (answer.code !== 0) {
      console.log(`${name}: VROOM failed: ${answer.error ?? run.stderr}`);
      continue;
    }
    // Re-time the routes with the exact legs, and check them as the solver's are checked.
    const byId = new Map(
      [...instance.jobs, ...(instance.shipments ?? []).flatMap((x) => [x.pickup, x.delivery])].map((j) => [
        j.id,
        j,
      ]),
    );
    const at = (a, b) => instance.distances[a * instance.locations + b];
    let total = 0;
    const routes = answer.routes.map((r) => {
      let t = instance.vehicles[0].shiftStart;
      let place = 0;
      let distance = 0;
      const stops = r.steps
        .filter((s) => s.type === "job" || s.type === "pickup" || s.type === "delivery")
        .map((s) => {
          const job = byId.get(String(s.id));
          const arrival = t + at(place, job.location);
          const start = Math.max(arrival, job.timeWindow[0]);
          distance += at(place, job.location);
          t = start + job.service;
          place = job.location;
          return { job: job.id, arrival, start, departure: t };
        });
      distance += at(place, 0);
      total += distance;
      return { vehicle: String(r.vehicle), stops, distance };
    });
    const solution = {
      routes,
      unassigned: answer.unassigned.map((u) => ({ job: String(u.id) })),
      distance: total,
    };
    const problems = checkSolution(instance, solution);
    const row = {
      name,
      distance: Number(total.toFixed(2)),
      vehicles: routes.length,
      seconds: Number(seconds.toFixed(1)),
      cpu_seconds: Number((user + sys).toFixed(1)),
      unassigned: answer.unassigned.length,
      feasible: problems.length === 0 && answer.unassigned.length === 0,
    };
    rows.push(row);
    console.log(
      `${name.padEnd(12)} VROOM -x ${x}: ${String(row.distance).padStart(9)} ${String(row.vehicles).padStart(3)} veh ${row.seconds.toFixed(1).padStart(6)} s (${row.cpu_seconds.toFixed(1)} s CPU)  ${row.feasible ? "feasible" : `INFEASIBLE ${problems[0] ?? `${row.unassigned} unassigned`}`}`,
    );
    if (out) writeFileSync(out, `${JSON.stringify({ vroom: `-x ${x} -t 1`, instances: rows }, null, 1)}\n`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await main();
