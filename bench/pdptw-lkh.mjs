// A second opinion on Li & Lim's pick-up-and-delivery instances (issue 55 part 2): writes an
// instance as an LKH-3 PDPTW problem (Helsgaun's LKH-3, built apart from this repository; its
// report, "An Extension of the Lin-Kernighan-Helsgaun TSP Solver for Constrained Traveling
// Salesman and Vehicle Routing Problems", 2017, §3 gives the format), and recounts the tour
// LKH-3 writes: routes, distance with exact legs, every pair on one route with its pick-up
// first, capacity after every stop, and time windows. LKH-3 counts legs times 1,000, rounded
// (EXACT_2D), so a stop may arrive late by a thousandth per leg with exact ones; those are
// counted apart, not as infeasible. It shares no code with src/solver or src/solver-check: a
// recount of a foreign solution by itself.
//
//   node bench/pdptw-lkh.mjs write INSTANCE.txt VEHICLES SECONDS SEED DIR [--from RESULTS.json]
//     (DIR/NAME.pdptw, DIR/NAME.sSEED.par; with --from, LKH-3 starts from that bench:vrp run's
//     routes for the instance, DIR/NAME.init.tour)
//   node bench/pdptw-lkh.mjs read INSTANCE.txt TOUR [--json]
//   then: LKH DIR/NAME.sSEED.par writes DIR/NAME.sSEED.tour
import { readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";

const argv = process.argv.slice(2);
const fromAt = argv.indexOf("--from");
const from = fromAt >= 0 ? argv.splice(fromAt, 2)[1] : null;
const [command, instancePath, ...rest] = argv.filter((a) => !a.startsWith("--"));
const usage = () => {
  console.error(
    "usage: node bench/pdptw-lkh.mjs write INSTANCE.txt VEHICLES SECONDS SEED DIR\n" +
      "       node bench/pdptw-lkh.mjs read INSTANCE.txt TOUR [--json]",
  );
  process.exit(2);
};
if (!instancePath || !["write", "read"].includes(command)) usage();

// Li & Lim's format (../shared/bench/pdptw/README.md): "K Q S", then per task
// "id x y demand ready due service pickup delivery"; task 0 is the depot.
const lines = readFileSync(instancePath, "utf8").trim().split(/\r?\n/);
const [vehicles, capacity] = lines[0].trim().split(/\s+/).map(Number);
const nodes = [];
for (const line of lines.slice(1)) {
  const f = line.trim().split(/\s+/).map(Number);
  if (f.length < 9 || f.some(Number.isNaN)) continue;
  const [id, x, y, demand, ready, due, service, pickup, delivery] = f;
  nodes[id] = { x, y, demand, ready, due, service, pickup, delivery };
}
const name = basename(instancePath).replace(/\.txt$/, "");
const n = nodes.length;

if (command === "write") {
  const [k, seconds, seed, dir] = rest;
  if (!k || !seconds || !seed || !dir) usage();
  // LKH-3 numbers nodes from 1, the depot first: task i is node i + 1.
  let p = `NAME : ${name}\nTYPE : PDPTW\nDIMENSION : ${n}\nVEHICLES : ${k}\nCAPACITY : ${capacity}\n`;
  p += "EDGE_WEIGHT_TYPE : EXACT_2D\nNODE_COORD_SECTION\n";
  for (const [i, t] of nodes.entries()) p += `${i + 1} ${t.x} ${t.y}\n`;
  p += "PICKUP_AND_DELIVERY_SECTION\n";
  for (const [i, t] of nodes.entries())
    p += `${i + 1} ${t.demand} ${t.ready} ${t.due} ${t.service} ${t.pickup ? t.pickup + 1 : 0} ${t.delivery ? t.delivery + 1 : 0}\n`;
  p += "DEPOT_SECTION\n1\n-1\nEOF\n";
  writeFileSync(`${dir}/${name}.pdptw`, p);
  let initial = "";
  if (from) {
    // The run's routes (task ids) as one tour: the depot, then each route followed by the next
    // copy of the depot (ids n + 1 … n + K - 1); unused vehicles are empty routes at the end.
    const row = JSON.parse(readFileSync(from, "utf8")).instances.find((x) => x.name === name);
    if (!row?.routes || row.routes.length > Number(k)) {
      console.error(`${from}: no routes for ${name}, or more than ${k}`);
      process.exit(1);
    }
    const ids = [1];
    for (let r = 0; r < Number(k); r++) {
      for (const task of row.routes[r] ?? []) ids.push(task + 1);
      if (r < Number(k) - 1) ids.push(n + 1 + r);
    }
    writeFileSync(
      `${dir}/${name}.init.tour`,
      `TYPE : TOUR\nDIMENSION : ${ids.length}\nTOUR_SECTION\n${ids.join("\n")}\n-1\nEOF\n`,
    );
    initial = `INITIAL_TOUR_FILE = ${dir}/${name}.init.tour\n`;
  }
  // The report's settings for problems with penalties (§3.2, "SPECIAL"); routes may stay
  // empty (MTSP_MIN_SIZE = 0), so VEHICLES is an upper bound, as the instance's K is.
  writeFileSync(
    `${dir}/${name}.s${seed}.par`,
    `SPECIAL\nPROBLEM_FILE = ${dir}/${name}.pdptw\nMTSP_MIN_SIZE = 0\nRUNS = 1\nMAX_TRIALS = 100000000\n` +
      `TIME_LIMIT = ${seconds}\nSEED = ${seed}\nTRACE_LEVEL = 1\nTOUR_FILE = ${dir}/${name}.s${seed}.tour\n${initial}`,
  );
  process.exit(0);
}

const tourPath = rest[0];
if (!tourPath) usage();
// A TSPLIB tour over the n nodes and K - 1 copies of the depot (ids above n): a route runs
// from one depot to the next.
const tour = [];
let inSection = false;
for (const line of readFileSync(tourPath, "utf8").split(/\r?\n/)) {
  if (line.trim() === "TOUR_SECTION") inSection = true;
  else if (inSection) {
    const id = Number(line.trim());
    if (id === -1) break;
    tour.push(id);
  }
}
// LKH-3 writes its tours from node 1; rotated there anyway, so no route is split at the ends.
const from1 = tour.indexOf(1);
if (from1 < 0) {
  console.error(`${tourPath}: no depot (node 1) in the tour`);
  process.exit(1);
}
const rotated = [...tour.slice(from1), ...tour.slice(0, from1), 1];
const routes = [];
let current = null;
for (const id of rotated) {
  if (id === 1 || id > n) {
    if (current?.length) routes.push(current);
    current = [];
  } else current?.push(id - 1);
}

const leg = (a, b) => Math.hypot(nodes[a].x - nodes[b].x, nodes[a].y - nodes[b].y);
const problems = [];
const routeOf = new Map();
const placeOf = new Map();
let distance = 0;
let lateByRounding = 0;
for (const [r, route] of routes.entries()) {
  let load = 0;
  let time = 0;
  let prev = 0;
  for (const [i, c] of [...route, 0].entries()) {
    if (c !== 0) {
      if (routeOf.has(c)) problems.push(`task ${c} served twice`);
      routeOf.set(c, r);
      placeOf.set(c, i);
      load += nodes[c].demand;
      if (load > capacity) problems.push(`route ${r + 1}: load ${load} > ${capacity} at ${c}`);
    }
    distance += leg(prev, c);
    time = Math.max(nodes[c].ready, time + (prev === 0 ? 0 : nodes[prev].service) + leg(prev, c));
    const late = time - nodes[c].due;
    if (late > 0.01) problems.push(`route ${r + 1}: task ${c} late by ${late.toFixed(3)}`);
    else if (late > 1e-9) lateByRounding++;
    prev = c;
  }
}
if (routes.length > vehicles) problems.push(`${routes.length} routes, the instance has ${vehicles} vehicles`);
for (let c = 1; c < n; c++) {
  if (!routeOf.has(c)) problems.push(`task ${c} not served`);
  else if (nodes[c].delivery) {
    const d = nodes[c].delivery;
    if (routeOf.get(d) !== routeOf.get(c)) problems.push(`pair ${c}/${d} on two routes`);
    else if (placeOf.get(d) < placeOf.get(c)) problems.push(`pair ${c}/${d}: drop-off first`);
  }
}

const result = {
  instance: name,
  vehicles_allowed: vehicles,
  routes: routes.length,
  distance: Math.round(distance * 100) / 100,
  feasible: problems.length === 0,
  late_by_rounding: lateByRounding,
  problems: problems.slice(0, 10),
};
if (process.argv.includes("--json")) console.log(JSON.stringify(result));
else
  console.log(
    `${name}: ${result.routes} routes, ${result.distance}, ${result.feasible ? "feasible" : `INFEASIBLE: ${problems.slice(0, 3).join("; ")}`}, ${lateByRounding} late by LKH's rounding of legs`,
  );
process.exit(problems.length === 0 ? 0 : 1);
