#!/usr/bin/env node
// `node bench/vrp-generate.mjs [--out bench/vrptw-1000] [--seed 31] [--customers 1000] [--density 1]`:
// writes one instance per Gehring & Homberger class (C1, C2, R1, R2, RC1, RC2) in Solomon's text
// format, generated with the classes' rules and a fixed seed, to measure the solver on instances
// it was never tuned on (tuning uses ../shared/bench/vrptw/homberger_1000_train only).
//
// The rules (Solomon 1987, extended by Gehring & Homberger 1999 to 200–1,000 customers):
// - geography on a 500 × 500 square, depot at its centre: R uniformly random, C in clusters,
//   RC half clustered, half random; integer coordinates, no two customers on one point;
// - type 1: a short horizon, small capacity (200), so many short routes; type 2: a long horizon
//   and a large capacity (700 for C, 1,000 for R and RC), so few long routes;
// - service time 90 for C, 10 for R and RC; demands in tens (10–50, mostly 10–20) for C,
//   1–50 for R and RC;
// - `density` of the customers get a time window (the rest the whole horizon less the trip
//   back): its centre uniformly random among the times the customer can be served and the
//   vehicle still return, its width the class's (C1 30–96, C2 160, R1 10, R2 6–240, RC1 30,
//   RC2 120). The horizons are the set's: C1 1,824, C2 3,914, R1 1,925, R2 7,697, RC1 1,821,
//   RC2 7,284.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const out = opt("out", "bench/vrptw-1000");
const seed = Number(opt("seed", "31"));
const customers = Number(opt("customers", "1000"));
const density = Number(opt("density", "1"));

/** mulberry32: deterministic for a seed on every runtime. */
function prng(s) {
  let state = s >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CLASSES = {
  c1: { geo: "C", horizon: 1824, capacity: 200, service: 90, width: (r) => 30 + Math.floor(r() * 67) },
  c2: { geo: "C", horizon: 3914, capacity: 700, service: 90, width: () => 160 },
  r1: { geo: "R", horizon: 1925, capacity: 200, service: 10, width: () => 10 },
  r2: { geo: "R", horizon: 7697, capacity: 1000, service: 10, width: (r) => 6 + Math.floor(r() * 235) },
  rc1: { geo: "RC", horizon: 1821, capacity: 200, service: 10, width: () => 30 },
  rc2: { geo: "RC", horizon: 7284, capacity: 1000, service: 10, width: () => 120 },
};

/** Points: uniform, clustered (Gaussian spread around random centres), or half of each. */
function geography(kind, n, r) {
  const taken = new Set(["250,250"]);
  const points = [];
  const clusters = Array.from({ length: Math.max(4, Math.round(n / 30)) }, () => [
    40 + r() * 420,
    40 + r() * 420,
  ]);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  while (points.length < n) {
    const clustered = kind === "C" || (kind === "RC" && points.length < n / 2);
    let x;
    let y;
    if (clustered) {
      const [cx, cy] = clusters[Math.floor(r() * clusters.length)];
      x = Math.round(cx + gauss() * 12);
      y = Math.round(cy + gauss() * 12);
    } else {
      x = Math.floor(r() * 501);
      y = Math.floor(r() * 501);
    }
    if (x < 0 || y < 0 || x > 500 || y > 500 || taken.has(`${x},${y}`)) continue;
    taken.add(`${x},${y}`);
    points.push([x, y]);
  }
  return points;
}

function demand(kind, r) {
  if (kind === "C") {
    const u = r();
    return u < 0.38 ? 10 : u < 0.79 ? 20 : u < 0.96 ? 30 : u < 0.995 ? 40 : 50;
  }
  return 1 + Math.floor(r() * 50);
}

mkdirSync(out, { recursive: true });
let k = 0;
for (const [name, c] of Object.entries(CLASSES)) {
  const r = prng(seed * 1000 + k++);
  const points = geography(c.geo, customers, r);
  const lines = [
    `${name}_gen_${seed}`,
    "",
    "VEHICLE",
    "NUMBER     CAPACITY",
    `${String(Math.ceil(customers / 4)).padStart(4)} ${String(c.capacity).padStart(12)}`,
    "",
    "CUSTOMER",
    "CUST NO.  XCOORD.    YCOORD.    DEMAND   READY TIME  DUE DATE   SERVICE TIME",
    "",
    `${"0".padStart(5)} ${"250".padStart(9)} ${"250".padStart(10)} ${"0".padStart(10)} ${"0".padStart(10)} ${String(c.horizon).padStart(10)} ${"0".padStart(10)}`,
  ];
  points.forEach(([x, y], i) => {
    const d0 = Math.hypot(x - 250, y - 250);
    // Latest start that still returns to the depot in time.
    const latest = Math.floor(c.horizon - d0 - c.service);
    const earliest = Math.ceil(d0);
    let ready = 0;
    let due = latest;
    if (r() < density) {
      const w = c.width(r);
      const centre = earliest + w / 2 + r() * Math.max(0, latest - earliest - w);
      ready = Math.max(earliest, Math.round(centre - w / 2));
      due = Math.min(latest, ready + w);
    }
    const q = demand(c.geo, r);
    lines.push(
      [i + 1, x, y, q, ready, due, c.service]
        .map((v, j) => String(v).padStart(j === 0 ? 5 : j === 1 ? 9 : 10))
        .join(" "),
    );
  });
  writeFileSync(join(out, `${name}_gen_${seed}.txt`), `${lines.join("\n")}\n`);
  console.log(`${join(out, `${name}_gen_${seed}.txt`)}: ${customers} customers`);
}
