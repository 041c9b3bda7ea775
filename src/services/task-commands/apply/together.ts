/**
 * Group commit across requests (the classic one of database logs): the runs that single
 * commands' task objects decide (TaskDO.planOne) are written by whichever request of this
 * isolate is writing for the account, together with every other run that arrived meanwhile, in
 * one D1 transaction (commitRuns, group.ts). On this runtime a D1 call costs more than the rows
 * a command writes (bench/README.md, "Twelfth session"), and one database takes one write at
 * a time anyway, so runs that would queue at D1 one call each go in one.
 *
 * Nobody waits for company: a request that finds no write in progress writes at once, alone; the
 * runs arriving during its write go together in the next one. Each transaction is written by a
 * request whose own run is in it, in its own context (a Worker may not do I/O for a request that
 * has ended), and the next one is led by the first request waiting. The others count the call
 * as their round trip and take its bookmark (db/session.ts).
 *
 * A request that hears nothing within `STALL_MS` (its leader's context was cancelled) does not
 * know whether its run was written: it answers "not written", and its task's object applies the
 * command again, which its stored `external_id` makes a replay if the run was written after all.
 */

import { absorbReport, sessionOf } from "../../../db/session";
import { databaseNameOf } from "../../../db/shards";
import { pollFor } from "../../../lib/poll";
import { commitRuns, type GroupEntry, STALL_MS } from "./group";

type Signal = { lead: true } | { at: number | null; bookmark: string | null; trips: number };
/** A request's run waiting to be written; `signal` is what it is told (it polls for it: lib/poll.ts). */
type Waiter = { entry: GroupEntry; signal?: Signal };
/** Who writes now (told to lead at `since`), and who waits for the next write. */
type Writer = { key: string; queue: Waiter[]; leader: Waiter | null; since: number };

const writers = new Map<string, Writer>();

/** Runs written and transactions made by this isolate's group commits of single commands (tests read them). */
export const togetherStats = { runs: 0, transactions: 0 };

/**
 * Writes `entry` (its carried runs first) with the runs other requests of this isolate are
 * writing for the same account and database: the time its run was found stored at, or null
 * (nothing of it was written; see `commitRuns`).
 */
export async function commitTogether(env: Env, accountId: string, entry: GroupEntry): Promise<number | null> {
  const key = `${databaseNameOf(env)} ${accountId}`;
  const w = writers.get(key) ?? { key, queue: [], leader: null, since: 0 };
  writers.set(key, w);
  const me: Waiter = { entry };
  w.queue.push(me);
  // No write in progress, or one whose leader went silent: this request leads.
  if (!w.leader || Date.now() - w.since > STALL_MS) lead(w, me);
  const s = await pollFor(() => me.signal, STALL_MS, { at: null, bookmark: null, trips: 0 });
  if (!("lead" in s)) {
    w.queue = w.queue.filter((x) => x !== me);
    // Told to lead just as it gave up: the next one leads instead.
    if (w.leader === me) handOver(w);
    absorbReport(env, { bookmark: s.bookmark, trips: s.trips });
    return s.at;
  }
  const group = w.queue.splice(0);
  let written: (number | null)[] = group.map(() => null);
  try {
    written = await commitRuns(
      env.DB,
      accountId,
      group.map((g) => g.entry),
    );
    togetherStats.runs += group.length;
    togetherStats.transactions += 1;
  } catch (err) {
    // Every run goes back to its object, which reports a lasting failure itself.
    console.error(JSON.stringify({ level: "error", type: "group_commit", error: String(err) }));
  } finally {
    const bookmark = sessionOf(env.DB)?.bookmark() ?? null;
    group.forEach((g, i) => {
      if (g !== me) g.signal = { at: written[i], bookmark, trips: 1 };
    });
    if (w.leader === me) handOver(w);
  }
  return written[group.indexOf(me)];
}

function lead(w: Writer, waiter: Waiter) {
  w.leader = waiter;
  w.since = Date.now();
  waiter.signal = { lead: true };
}

/** The first request waiting writes next; none: the next to come writes at once. */
function handOver(w: Writer) {
  const next = w.queue[0];
  if (next) return lead(w, next);
  w.leader = null;
  writers.delete(w.key);
}
