import { describe, expect, it } from "vitest";
import { solve } from "../../src/solver";
import { compile } from "../../src/solver/model";
import { Random } from "../../src/solver/random";
import { State } from "../../src/solver/state";
import { applyString, bestString, stringMove } from "../../src/solver/strings";
import { checkSolution } from "../../src/solver-check";
import { lcg } from "./arbitrary";
import { drive, randomInstance, routeOf, twoRoutes } from "./two-routes";

const insertAll = (seq: number[], p: number, xs: number[]) => [...seq.slice(0, p), ...xs, ...seq.slice(p)];

describe("inter-route string relocation", () => {
  it("finds the best relocation of a string of 1–3 stops from each position (reversed or not) as brute force does, on any matrix", () => {
    let improving = 0;
    let checked = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const m = compile(randomInstance(seed, seed % 2 === 0));
      const pair = twoRoutes(m, lcg(seed * 29));
      if (!pair) continue;
      const [A, B] = pair;
      const s = new State(m, [A, B]);
      for (const x of A.seq) s.routeOf[x] = 0;
      for (const x of B.seq) s.routeOf[x] = 1;
      for (let i = 0; i < A.seq.length; i++) {
        // Brute force: every string from i, both ways, at every position of B, routes driven from scratch.
        let brute = Number.POSITIVE_INFINITY;
        for (let len = 1; len <= 3 && i + len <= A.seq.length; len++) {
          const rest = drive(m, 0, [...A.seq.slice(0, i), ...A.seq.slice(i + len)]);
          if (!rest.time) continue;
          for (const reversed of [false, true]) {
            const str = A.seq.slice(i, i + len);
            if (reversed) str.reverse();
            for (let p = 0; p <= B.seq.length; p++) {
              const b1 = drive(m, 1, insertAll(B.seq, p, str));
              if (b1.time && b1.load) brute = Math.min(brute, rest.cost + b1.cost - A.cost - B.cost);
            }
          }
        }
        // Every stop of B is among the neighbours when they are all taken: every position is tried.
        const x = bestString(m, s, 0, i, m.J);
        checked++;
        if (brute < -1e-9) {
          improving++;
          expect(x?.delta, `seed ${seed} i ${i}`).toBeCloseTo(brute, 9);
        } else expect(x, `seed ${seed} i ${i}`).toBeNull();
      }
    }
    expect(checked).toBeGreaterThan(600);
    expect(improving).toBeGreaterThan(200);
  });

  it("applies a relocation as the routes rebuilt, jobs' routes included; undo restores; a move only ever shortens", () => {
    let moves = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const m = compile(randomInstance(seed, seed % 3 !== 0));
      const pair = twoRoutes(m, lcg(seed * 17));
      if (!pair) continue;
      const [A, B] = pair;
      const s = new State(m, [A, B]);
      for (const x of A.seq) s.routeOf[x] = 0;
      for (const x of B.seq) s.routeOf[x] = 1;
      const x = bestString(m, s, 0, Math.floor(lcg(seed)() * A.seq.length), m.J);
      if (x) {
        const str = A.seq.slice(x.i, x.i + x.len);
        if (x.reversed) str.reverse();
        const a = [...A.seq.slice(0, x.i), ...A.seq.slice(x.i + x.len)];
        const b = insertAll(B.seq, x.p, str);
        s.begin();
        applyString(m, s, 0, x);
        const fresh = [routeOf(m, 0, a), routeOf(m, 1, b)];
        for (const k of [0, 1]) {
          expect(s.routes[k].seq).toEqual(fresh[k].seq);
          expect(s.routes[k].cost).toBeCloseTo(fresh[k].cost, 9);
          const n = fresh[k].seq.length;
          expect(Array.from(s.routes[k].ls.subarray(0, n))).toEqual(Array.from(fresh[k].ls.subarray(0, n)));
          expect(Array.from(s.routes[k].es.subarray(0, n))).toEqual(Array.from(fresh[k].es.subarray(0, n)));
          expect(s.routes[k].feasible).toBe(true);
          for (const j of fresh[k].seq) expect(s.routeOf[j]).toBe(k);
        }
        expect(s.routesDelta()).toBeCloseTo(x.delta, 9);
        s.undo();
        expect(s.routes[0]).toBe(A);
        expect(s.routes[1]).toBe(B);
      }
      s.begin();
      const before = A.cost + B.cost;
      const made = stringMove(m, s, new Random(seed), 30);
      const after = s.routes[0].cost + s.routes[1].cost;
      if (made) {
        moves++;
        expect(after).toBeLessThan(before);
        expect(s.routes[0].feasible && s.routes[1].feasible).toBe(true);
      } else expect(after).toBe(before);
    }
    expect(moves).toBeGreaterThan(20);
  });

  it("solves with string relocations to solutions the independent checker accepts", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const instance = randomInstance(seed, seed % 2 === 0);
      const solution = solve(instance, { seed, iterations: 300, stringRelocation: 0.5 });
      expect(checkSolution(instance, solution), `seed ${seed}`).toEqual([]);
      expect(solution.stats.cost).toBeLessThanOrEqual(solution.stats.initialCost);
    }
  });
});
