import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { KeptLane, Lane, StopRow } from "../../src/services/auto-assign/day";
import {
  chainsOf,
  keepLanes,
  laneInstance,
  laneSignature,
  type Shift,
  slotIn,
  travelOf,
} from "../../src/services/auto-assign/lanes";
import type { AccountShift } from "../../src/services/route-optimizations/build";
import { matrixFromEnv } from "../../src/services/routing";
import { bestPlacement, cheapestInsertion } from "../../src/solver/insert";
import { lcg } from "../solver/arbitrary";

const NOW = 1_800_000_000; // seconds
const account: AccountShift = {
  timezone: "Etc/UTC",
  optimize_earliest_start: "00:00:00",
  optimize_latest_end: "23:59:00",
  optimize_visit_duration_margin: "00:01:00",
};

/** A random day: lanes of 0–9 stops around Helsinki (windows, demands, a task under way), and new tasks. */
function day(seed: number) {
  const rnd = lcg(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  let n = 0;
  const stop = (state: string): StopRow => {
    const after = rnd() < 0.3 ? null : (NOW + Math.floor(rnd() * 4 * 3600)) * 1000;
    return {
      id: `t${seed}-${n++}`,
      state: state as StopRow["state"],
      route_id: null,
      position: n,
      created_at: n,
      version: 1,
      order_id: null,
      category: "drop_off",
      duration_seconds: pick([0, 120, 300, null]),
      complete_after: after,
      complete_before:
        after === null ? pick([null, (NOW + 6 * 3600) * 1000]) : after + pick([1800, 3600, 7200]) * 1000,
      assignee_id: null,
      lon: 24.9 + rnd() * 0.2,
      lat: 60.15 + rnd() * 0.1,
      demand: pick([null, 1, 2, [1, 3]]),
      updated_at: n,
    };
  };
  const lanes: Lane[] = Array.from({ length: 6 }, (_, i) => {
    const count = Math.floor(rnd() * 10);
    const stops = Array.from({ length: count }, (_, k) =>
      stop(k === 0 && rnd() < 0.3 ? "transit" : "assigned"),
    );
    return {
      route: rnd() < 0.2 ? null : { id: `r${i}`, start: null, end: rnd() < 0.3 ? [24.95, 60.2] : null },
      worker: { user_id: `w${i}`, name: `W${i}`, vehicle_capacity: pick(["[]", "[6]", "[10, 4]"]) },
      stops,
      start: rnd() < 0.8 ? [24.9 + rnd() * 0.2, 60.15 + rnd() * 0.1] : null,
      fixed: stops.filter((s) => s.state === "transit").length,
      lastPosition: count || null,
    };
  });
  const tasks = Array.from({ length: 12 }, () => ({ ...stop("unassigned"), position: null }));
  return { lanes, tasks };
}

describe("auto-assign's kept lanes (lanes.ts)", () => {
  it("place each task as a fresh instance per call would: same route, position and added time, or the same reason", async () => {
    let placed = 0;
    let refused = 0;
    for (let seed = 1; seed <= 25; seed++) {
      const { lanes, tasks } = day(seed);
      const kept = new Map<string, KeptLane>();
      const keyOf = (l: Lane) => l.worker.user_id;
      const { chains, flat } = chainsOf(lanes);
      // Built once, at the first shift; every task after it is written into the same slots.
      const first: Shift = { start: NOW, end: NOW + 10 * 3600 };
      await keepLanes(
        env,
        lanes.map((lane) => ({ lane, sig: laneSignature(lane, "k", account, first) })),
        chains,
        account,
        first,
        kept,
        keyOf,
      );
      for (const [i, task] of tasks.entries()) {
        // "Now" moves on between insertions.
        const shift: Shift = { start: NOW + i * 600, end: first.end };
        const travel = await travelOf(env, lanes, [task]);
        const expected = cheapestInsertion(
          lanes.map((l) => laneInstance(l, travel, account, shift)),
          task.id,
        );
        const star = await matrixFromEnv(env).star([task.lon!, task.lat!], flat);
        const got = bestPlacement(
          lanes.map((l) => slotIn(kept.get(keyOf(l))!, task, star, chains.get(l)!.offset, account, shift)),
        );
        if ("reason" in expected) {
          expect(got, `seed ${seed} task ${i}`).toEqual(expected);
          refused++;
        } else {
          expect("reason" in got, `seed ${seed} task ${i}`).toBe(false);
          const g = got as typeof expected;
          expect([g.route, g.position], `seed ${seed} task ${i}`).toEqual([
            expected.route,
            expected.position,
          ]);
          expect(g.added).toBeCloseTo(expected.added, 6);
          placed++;
        }
      }
    }
    // Both outcomes were met, many times.
    expect(placed).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(10);
  });
});
