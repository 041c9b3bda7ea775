/**
 * One SISR iteration (Christiaens & Vanden Berghe, Transportation Science 54(2), 2020): tail
 * exchanges, then a ruin and recreate accepted by simulated annealing (§5) at the temperature
 * given. Shared by the single annealing run and by the population's runs (`population.ts`), so
 * that both make the same moves with the same draws.
 */
import type { Model } from "./model";
import type { Random } from "./random";
import { removeRoute, ruin } from "./ruin";
import { type Recreate, recreate } from "./search";
import { type State, totalCost } from "./state";
import { tailMove } from "./tails";

export class Annealer {
  constructor(
    readonly m: Model,
    readonly rnd: Random,
    readonly g: Recreate,
    readonly near: number,
    readonly tails: number,
    readonly routeRemoval: number,
    readonly cBar: number,
    readonly lMax: number,
    readonly unassignedPenalty: number,
  ) {}

  /** One iteration on `current` (changed in place); returns `best`, or a snapshot of a better solution met. */
  step(current: State, temperature: number, best: State): State {
    const { m, rnd, g, unassignedPenalty } = this;
    // Before each ruin and recreate, tail exchanges, each drawn with probability `tails` (as many
    // as the draws allow: on average tails ÷ (1 − tails)); one only ever shortens the routes, so
    // no annealing. They do not count as iterations: a budget keeps its ruins and recreates.
    while (this.tails > 0 && rnd.next() < this.tails) {
      const unassigned = current.begin();
      current.unassigned.push(...unassigned);
      if (tailMove(m, current, rnd, this.near)) {
        current.cost += current.routesDelta();
        if (current.cost < best.cost) {
          current.cost = totalCost(m, current, unassignedPenalty);
          best = current.snapshot(m);
        }
      }
    }
    // One move on the current solution, in place: undone if the annealing rejects it.
    const again = current.begin();
    const dropped: number[] = [];
    g.open = !(this.routeRemoval > 0 && rnd.next() < this.routeRemoval);
    if (!g.open) removeRoute(m, current, rnd, dropped);
    const { removed } = ruin(m, current, rnd, this.cBar, this.lMax);
    recreate(m, current, [...dropped, ...removed, ...again], g);
    const before = current.cost;
    const cost = m.balance
      ? totalCost(m, current, unassignedPenalty)
      : before + current.routesDelta() + (current.unassigned.length - again.length) * unassignedPenalty;
    if (cost < before - temperature * Math.log(rnd.next() || Number.MIN_VALUE)) {
      current.cost = cost;
      if (cost < best.cost) {
        // Summed deltas drift: the best is costed afresh.
        current.cost = totalCost(m, current, unassignedPenalty);
        best = current.snapshot(m);
      }
    } else current.undo();
    return best;
  }
}
