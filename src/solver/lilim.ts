/**
 * Li & Lim's pick-up-and-delivery (PDPTW) text format: a first line `K Q S` (vehicles, capacity,
 * speed), then one line per node, `id x y demand ready due service pickup delivery`; node 0 is
 * the depot, a pick-up has a positive demand and names its drop-off in the last column, a
 * drop-off a negative demand and names its pick-up in the one before. Distances are Euclidean,
 * unrounded; travel time is distance over the speed (1 in the published sets); the depot's due
 * date is the shift end. Each request becomes a shipment whose two jobs are named by their node
 * numbers, so solutions name the nodes as Solomon's do.
 */
import type { Instance, Job } from "./types";

/** Whether `text` looks like a Li & Lim file: a first line of three numbers (Solomon's starts with a name). */
export function isLiLim(text: string): boolean {
  const first = text.split(/\r?\n/).find((l) => l.trim()) ?? "";
  return /^\s*\d+(\.\d+)?\s+\d+(\.\d+)?\s+\d+(\.\d+)?\s*$/.test(first);
}

export function parseLiLim(
  text: string,
  objective: Instance["objective"] = "distance",
  name = "instance",
): Instance & { name: string } {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  const [count, capacity, speed] = lines[0].split(/\s+/).map(Number);
  const rows = lines.slice(1).map((l) => l.split(/\s+/).map(Number));
  const n = rows.length;
  const index = new Map(rows.map((r, i) => [r[0], i]));
  const distances = new Float64Array(n * n);
  for (let a = 0; a < n; a++) {
    for (let b = 0; b < n; b++)
      distances[a * n + b] = Math.hypot(rows[a][1] - rows[b][1], rows[a][2] - rows[b][2]);
  }
  const v = speed > 0 ? speed : 1;
  const durations = v === 1 ? distances : distances.map((d) => d / v);
  const job = (i: number): Job => ({
    id: String(rows[i][0]),
    location: i,
    service: rows[i][6],
    timeWindow: [rows[i][4], rows[i][5]],
    demand: [],
  });
  const shipments: NonNullable<Instance["shipments"]> = [];
  for (let i = 1; i < n; i++) {
    const r = rows[i];
    const delivery = index.get(r[8]);
    // A pick-up: it names its drop-off (a drop-off names 0 there).
    if (r[8] > 0 && delivery !== undefined)
      shipments.push({ pickup: job(i), delivery: job(delivery), demand: [Math.abs(r[3])] });
  }
  const depot = rows[0];
  return {
    name,
    locations: n,
    distances,
    durations,
    objective,
    vehicles: Array.from({ length: count }, (_, i) => ({
      id: String(i + 1),
      start: 0,
      end: 0,
      shiftStart: depot[4],
      shiftEnd: depot[5],
      capacity: [capacity],
    })),
    jobs: [],
    shipments,
  };
}
