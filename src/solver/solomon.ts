/**
 * Solomon's VRPTW text format (also Gehring & Homberger's): the fleet size and capacity, then
 * one line per customer (number, x, y, demand, ready time, due date, service time), customer 0
 * being the depot. Distances are Euclidean, unrounded; travel time equals distance; the depot's
 * due date is the shift end. Customer numbers become job ids, so solutions name them.
 */
import type { Instance } from "./types";

export function parseSolomon(
  text: string,
  objective: Instance["objective"] = "distance",
): Instance & { name: string } {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  const name = lines.find(Boolean) ?? "instance";
  const vehicleAt = lines.findIndex((l) => /^VEHICLE/i.test(l));
  const [count, capacity] = (lines.slice(vehicleAt + 1).find((l) => /^\d/.test(l)) ?? "")
    .split(/\s+/)
    .map(Number);
  const customerAt = lines.findIndex((l) => /^CUSTOMER/i.test(l));
  const rows = lines
    .slice(customerAt + 1)
    .filter((l) => /^\d/.test(l))
    .map((l) => l.split(/\s+/).map(Number));
  const n = rows.length;
  const distances = new Float64Array(n * n);
  for (let a = 0; a < n; a++) {
    for (let b = 0; b < n; b++)
      distances[a * n + b] = Math.hypot(rows[a][1] - rows[b][1], rows[a][2] - rows[b][2]);
  }
  const depot = rows[0];
  return {
    name,
    locations: n,
    distances,
    durations: distances,
    objective,
    vehicles: Array.from({ length: count }, (_, i) => ({
      id: String(i + 1),
      start: 0,
      end: 0,
      shiftStart: depot[4],
      shiftEnd: depot[5],
      capacity: [capacity],
    })),
    jobs: rows.slice(1).map((r, i) => ({
      id: String(r[0]),
      location: i + 1,
      service: r[6],
      timeWindow: [r[4], r[5]] as [number, number],
      demand: [r[3]],
    })),
  };
}
