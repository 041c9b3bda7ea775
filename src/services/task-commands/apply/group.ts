/**
 * Group commit of a batch's commands over many tasks: each task's Durable Object decides its
 * run of commands (planRun, on the task as it knows it) and hands back what the run writes; the
 * request then writes the runs of many tasks in one D1 transaction of a few statements, instead
 * of one transaction per task from each object. On this runtime a D1 call costs more than the
 * rows it writes (bench/README.md, "Eleventh session"): a batch of 500 commands over 100 tasks
 * made 100 calls, now one per ~100 tasks.
 *
 * A run is guarded as a task's own batch guards it (loop.ts, writeRun), and more: its UPDATE
 * applies only to the very task state it was decided on (its version and its last command), and
 * its command rows and events only where that UPDATE happened in this transaction (the task
 * names the run's last command, whose row is not stored yet). So a run is written whole or not
 * at all, once, whatever else the transaction holds, and a run decided on a state that another
 * writer has moved since writes nothing.
 *
 * Runs of one task decided by its object while an earlier one was still on its way to D1 (two
 * requests at once) are decided on that earlier run's outcome: each request's transaction
 * carries the earlier, unconfirmed runs of its tasks (`carried`) before its own, in order, so
 * whichever request reaches D1 first writes them all, and the other finds them written. Without
 * this, concurrent batches over the same tasks would mostly conflict.
 *
 * The transaction's last statement reads which of the request's runs are stored; a run that is
 * not goes back to its task's object, which applies it on the task as stored (the path of
 * every batch before group commit). A duplicate `external_id` rolls the transaction back whole
 * (the unique index): every run of it goes back. A run whose `external_id` is already stored
 * (a retried command) finds its UPDATE's guard false instead, and goes back alone.
 *
 * Statement count stays within D1's per-invocation budget and each JSON parameter well below
 * its 2 MB value limit (D1 limits): runs are grouped into transactions of at most `MAX_TASKS`
 * tasks and about `MAX_JSON` characters.
 */
import { COMMAND_UUIDS, jsonRowColumns, TASK_COMMAND_COLUMNS, uuidBytes } from "../../../db/uuid-bytes";
import { uuidv7 } from "../../../lib/ids";
import { pollFor } from "../../../lib/poll";
import { proofGuard, type WriteProof } from "../../auth/tokens";
import { jsonEventsInsert, type PackedEvent, packedEvents } from "../../events/outbox";
import type { TaskRow } from "../../tasks/types";
import type { Actor, CommandInput, CommandOutcome } from "../types";
import { COMMANDS_PER_BATCH, needsMetafieldContext } from "./loop";
import { planRun } from "./plan";
import { commandValues, runParts } from "./statements";

/** One task's run as its object planned it: what the group commit writes for it. */
export type GroupRun = {
  taskId: string;
  /** The task state the run was decided on (its UPDATE's guard): version and last command. */
  version: number;
  baseLastId: string | null;
  /** The task's columns the run moves, with their final values. */
  set: Record<string, unknown>;
  accepted: number;
  /** The run's last accepted command: the task's `last_command_id` once the run is written. */
  lastId: string;
  /** The command rows' values, in TASK_COMMAND_COLUMNS order. */
  rows: unknown[][];
  events: PackedEvent[];
  now: number;
  /**
   * The token check the run's write carries (a single command's, http/first-batch.ts): its
   * UPDATE applies only while the token's row is the proven one, unexpired when written. A run
   * without one belongs to a request that checked its token before.
   */
  proof?: WriteProof;
};

/** A request's run of one task, after the earlier runs of that task it must carry. */
export type GroupEntry = { run: GroupRun; carried: GroupRun[] };

const MAX_TASKS = 100;
const MAX_JSON = 512 * 1024;

/** A task's run planned for the group commit, and what the request answers once it is written. */
export type GroupPlan = {
  run: GroupRun;
  outcomes: CommandOutcome[];
  /** The task as the run leaves it. */
  task: TaskRow;
  geocode: boolean;
  rescheduled: boolean;
};

/**
 * The run of `commands` on `task` for the group commit, or null when they do not make one the
 * commit can write: more than a batch's worth, a command whose decision needs the account's
 * metafields or the transit/active limit (checked in the same statement that writes, loop.ts),
 * a contact address change, or nothing accepted. The task's object applies those itself.
 */
export function planGroup(
  actor: Actor,
  task: TaskRow,
  commands: CommandInput[],
  baseUrl: string,
): GroupPlan | null {
  if (commands.length > COMMANDS_PER_BATCH || needsMetafieldContext(commands)) return null;
  const run = planRun(actor, task, commands, 0, commands.length);
  if (run.length !== commands.length) return null;
  const parts = runParts(actor, task, run, baseUrl);
  if (!parts.lastId) return null;
  return {
    run: {
      taskId: task.id,
      version: task.version,
      baseLastId: task.last_command_id ?? null,
      set: parts.set,
      accepted: parts.accepted,
      lastId: parts.lastId,
      rows: parts.rows.map(commandValues),
      events: packedEvents(parts.events, parts.now).rows,
      now: parts.now,
    },
    outcomes: parts.rows.map((row) => ({ row, replay: false })),
    task: run[run.length - 1].after,
    geocode: run.some((e) => e.geocode),
    rescheduled: run.some((e) => e.rescheduled),
  };
}

/**
 * SQL over `j.value`: the run (task at `taskAt`, last command at `lastAt`) was written by this
 * transaction: the task names its last command, whose row is not stored yet. Holds until the
 * run's command rows are inserted, so the events go first.
 */
const writtenHere = (taskAt: number, lastAt: number) =>
  `EXISTS (SELECT 1 FROM tasks t WHERE t.id = j.value ->> ${taskAt} AND t.last_command_id = j.value ->> ${lastAt}) ` +
  `AND NOT EXISTS (SELECT 1 FROM task_commands c WHERE c.id = ${uuidBytes(`j.value ->> ${lastAt}`)})`;

const EXTERNAL_ID_AT = TASK_COMMAND_COLUMNS.indexOf("external_id");

/** The statements writing `runs` (of different tasks) after what the statements before wrote. */
function runStatements(
  db: D1Database,
  accountId: string,
  runs: GroupRun[],
  now: number,
): D1PreparedStatement[] {
  const out: D1PreparedStatement[] = [];
  // One UPDATE per set of moved columns (a run of `update` commands moves the same few) and
  // token proof (the proof's parameters are the statement's).
  const bySet = new Map<string, { columns: string[]; proof?: WriteProof; runs: GroupRun[] }>();
  for (const r of runs) {
    const columns = Object.keys(r.set);
    const key = `${columns.join(",")} ${r.proof ? JSON.stringify(r.proof) : ""}`;
    const group = bySet.get(key) ?? { columns, proof: r.proof, runs: [] };
    group.runs.push(r);
    bySet.set(key, group);
  }
  for (const { columns, proof, runs: group } of bySet.values()) {
    const guard = proof ? proofGuard(proof, now) : { sql: "1", params: [] };
    // A stored external_id (a retry) would roll the whole transaction back at the command's
    // INSERT (the unique index): its run writes nothing instead.
    out.push(
      db
        .prepare(
          `UPDATE tasks SET ${columns.map((c, i) => `${c} = j.value ->> ${6 + i}`).join(", ")},
             version = version + (j.value ->> 1), last_command_id = j.value ->> 2
           FROM json_each(?1) AS j
           WHERE tasks.id = j.value ->> 0 AND tasks.version = j.value ->> 3 AND tasks.last_command_id IS j.value ->> 4
             AND NOT EXISTS (SELECT 1 FROM task_commands c WHERE c.account_id = ${uuidBytes("?2")}
               AND c.external_id IN (SELECT value FROM json_each(j.value -> 5)))
             AND ${guard.sql}`,
        )
        .bind(
          JSON.stringify(
            group.map((r) => [
              r.taskId,
              r.accepted,
              r.lastId,
              r.version,
              r.baseLastId,
              r.rows.map((row) => row[EXTERNAL_ID_AT]),
              ...columns.map((c) => r.set[c]),
            ]),
          ),
          accountId,
          ...guard.params,
        ),
    );
  }
  out.push(
    db
      .prepare(jsonEventsInsert(writtenHere(5, 6)))
      .bind(
        accountId,
        JSON.stringify(runs.flatMap((r) => r.events.map((e) => [...e, r.now, r.taskId, r.lastId]))),
      ),
  );
  const n = TASK_COMMAND_COLUMNS.length;
  out.push(
    db
      .prepare(
        `INSERT INTO task_commands (${TASK_COMMAND_COLUMNS.join(", ")})
         SELECT ${jsonRowColumns(TASK_COMMAND_COLUMNS, COMMAND_UUIDS)} FROM json_each(?) AS j
         WHERE ${writtenHere(n, n + 1)}`,
      )
      .bind(JSON.stringify(runs.flatMap((r) => r.rows.map((row) => [...row, r.taskId, r.lastId])))),
  );
  return out;
}

/**
 * The statements of one transaction: the carried runs and then the own ones, a layer at a time
 * (a task's runs in their order), and last a read of which own runs are stored.
 */
function statements(
  db: D1Database,
  accountId: string,
  entries: GroupEntry[],
  now: number,
): D1PreparedStatement[] {
  const out: D1PreparedStatement[] = [];
  // A run written twice in one transaction would store its events twice (their ids collide).
  const seen = new Set<string>();
  const chains = entries.map((e) =>
    [...e.carried, e.run].map((r) => {
      if (seen.has(r.lastId)) return null;
      seen.add(r.lastId);
      return r;
    }),
  );
  const depth = Math.max(...chains.map((c) => c.length));
  for (let d = 0; d < depth; d++) {
    out.push(
      ...runStatements(
        db,
        accountId,
        chains.flatMap((c) => {
          const r = c[d];
          return r ? [r] : [];
        }),
        now,
      ),
    );
  }
  out.push(
    db
      .prepare(
        `SELECT j.value AS id FROM json_each(?) AS j
         WHERE EXISTS (SELECT 1 FROM task_commands c WHERE c.id = ${uuidBytes("j.value")})`,
      )
      .bind(JSON.stringify(entries.map((e) => e.run.lastId))),
  );
  return out;
}

/**
 * The run with its events' ids and time taken now, just before its transaction: an event's id
 * (uuidv7) must not be older than its commit by more than readers allow for a late one (the
 * `/events/` settle delay, the live stream's overlap, both 5 s), and a run may wait for an
 * earlier request's write after its object decided it. Ids keep their order, so the run's base
 * (its largest id) stays the base.
 */
function restamped(r: GroupRun, now: number): GroupRun {
  const ids = new Map(r.events.map((e) => [e[0], uuidv7(now)]));
  return {
    ...r,
    now,
    events: r.events.map(
      ([id, type, payload, base]): PackedEvent => [
        ids.get(id)!,
        type,
        payload,
        base === null ? null : (ids.get(base) ?? base),
      ],
    ),
  };
}

/** Entries grouped into transactions: at most MAX_TASKS each, and about MAX_JSON of parameters. */
function transactions(entries: GroupEntry[]): GroupEntry[][] {
  const out: GroupEntry[][] = [];
  let current: GroupEntry[] = [];
  let size = 0;
  for (const e of entries) {
    const bytes = [...e.carried, e.run].reduce(
      (sum, r) => sum + r.events.reduce((s, ev) => s + ev[2].length + 80, 0) + JSON.stringify(r.rows).length,
      0,
    );
    if (current.length && (current.length >= MAX_TASKS || size + bytes > MAX_JSON)) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(e);
    size += bytes;
  }
  if (current.length) out.push(current);
  return out;
}

/**
 * The last run of each task this isolate saw stored (task id → the run's last command), for
 * the next request to tell the task's object, which then stops carrying it and the runs before
 * it (TaskDO.planCommands). A hint only, bounded: a run missing here is carried once more and
 * found written (nothing is written twice).
 */
const storedRuns = new Map<string, string>();
const STORED_RUNS_KEPT = 10_000;

/** The last command of the last run of `taskId` this isolate saw stored, if any. */
export const lastStoredRun = (taskId: string) => storedRuns.get(taskId);

function noteStored(run: GroupRun) {
  storedRuns.delete(run.taskId);
  storedRuns.set(run.taskId, run.lastId);
  if (storedRuns.size > STORED_RUNS_KEPT) storedRuns.delete(storedRuns.keys().next().value!);
}

/**
 * The requests of this isolate writing runs now, each with its place in arrival order (gone
 * once its writes are done). A request whose object carried it a run of an earlier request here
 * waits for that request's write instead of sending the run again (it was on its way to D1
 * anyway), polling on timers of its own (lib/poll.ts), for at most STALL_MS; a run of a later
 * request, of another isolate, of a request that never wrote or that it waited for too long is
 * carried. Only earlier ones are waited for, so two requests never wait for each other.
 */
const writing = new Map<string, { seq: number }>();
let requests = 0;

/** How long a request waits for an earlier one's write before it carries that one's runs itself. */
export const STALL_MS = 10_000;

/**
 * A request's turn at group commit: `id` names it to the tasks' objects (TaskDO.planCommands
 * `request`), `settle` sorts a carried run into waiting for its own request or carrying it,
 * and `finish` (always called) lets later requests go on.
 */
export function groupTurn() {
  const id = crypto.randomUUID();
  const seq = ++requests;
  writing.set(id, { seq });
  const waits = new Set<string>();
  let late = false;
  return {
    id,
    /**
     * The runs to carry of `carried`, known once `ready` settled: those whose requests are not
     * waited for, or all of them when the wait for those requests ran out (STALL_MS).
     */
    settle(carried: { run: GroupRun; request?: string }[]): () => GroupRun[] {
      const now = carried.flatMap((c) => {
        const other = c.request ? writing.get(c.request) : undefined;
        if (other && other.seq < seq) {
          waits.add(c.request!);
          return [];
        }
        return [c.run];
      });
      return () => (late ? carried.map((c) => c.run) : now);
    },
    async ready() {
      const done = () => ([...waits].every((w) => !writing.has(w)) ? true : undefined);
      late = !(await pollFor(done, STALL_MS, false));
    },
    finish() {
      writing.delete(id);
    },
  };
}

/**
 * Writes the entries' runs (each entry of a different task of `accountId`), the carried ones
 * first; answers, per entry, the time its own run was found stored at (by this call or, carried,
 * by another request's; a run carrying a proof held it then), or null: it wrote nothing and goes
 * back to its task's object.
 */
export async function commitRuns(
  db: D1Database,
  accountId: string,
  entries: GroupEntry[],
): Promise<(number | null)[]> {
  const done = new Map<string, number>();
  await Promise.all(
    transactions(entries).map(async (group) => {
      const now = Date.now();
      // The carried runs first: ids follow the order the runs are written in.
      const stamped = group.map((e) => {
        const carried = e.carried.map((c) => restamped(c, now));
        return { carried, run: restamped(e.run, now) };
      });
      let results: D1Result[];
      try {
        results = await db.batch(statements(db, accountId, stamped, now));
      } catch (err) {
        // The unique index on external_id rolled the transaction back whole (a concurrent
        // request stored one of its commands): every run of it goes back to its object.
        if (/UNIQUE constraint failed/i.test(String(err))) return;
        throw err;
      }
      for (const row of results[results.length - 1].results as { id: string }[]) done.set(row.id, now);
    }),
  );
  return entries.map((e) => {
    // By the run's last command: entries of one call may be runs of the same task.
    const at = done.get(e.run.lastId);
    if (at === undefined) return null;
    noteStored(e.run);
    return at;
  });
}
