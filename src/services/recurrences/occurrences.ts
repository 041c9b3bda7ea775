import { perDatabase } from "../../db/shards";
/**
 * Making the occurrences of recurrences (contract §20): the template moved to an occurrence,
 * created through the same verbs as POST /tasks/ and POST /orders/ (validation, metafields,
 * geocoding, events all apply), and the cron's sweep over the horizon.
 *
 * Exactly once per (recurrence, occurrence time), however many sweeps overlap: the occurrence is
 * claimed by a plain INSERT into `recurrence_occurrences`, whose UNIQUE (recurrence_id,
 * occurrence_at) index refuses a second claim, and that INSERT is the first statement of the
 * very D1 batch that writes the task (or the order and its tasks) and its events. A D1 batch is
 * one transaction, so a refused claim rolls the whole batch back: the loser writes nothing and
 * sees a constraint error, which here means "already made". Claim and task commit together, so
 * a crash can leave neither half alone: nothing is lost (the next sweep claims it again), nothing
 * is made twice. The claim's foreign key to `recurrences` fails the same way once the recurrence
 * is deleted, so a sweep that read it just before the DELETE makes nothing more.
 */
import {
  formatInZone,
  nextOccurrence,
  occurrencesBetween,
  type Schedule,
  shiftToOccurrence,
} from "../../domain/recurrence";
import { ValidationError } from "../../http/errors";
import { logLine } from "../../http/log";
import { parseTimestamp } from "../../http/timezones";
import { pool } from "../../lib/pool";
import type { OrderWriteBody } from "../../schemas/orders";
import type { TaskWriteBody } from "../../schemas/tasks";
import { accountPrincipal, type Principal } from "../auth/principal";
import { type OrderWriteResult, writeOrders } from "../orders";
import { createTask, type RecurrenceMark, type TaskRow } from "../tasks";

export type RecurrenceKind = "task" | "order";

export type RecurrenceRow = {
  id: string;
  account_id: string;
  kind: RecurrenceKind;
  rule: string;
  start_local: string;
  end_local: string | null;
  timezone: string;
  assignee_id: string | null;
  template: string;
  is_active: number;
  next_occurrence_at: number | null;
  created_by: string | null;
  created_at: number;
  updated_at: number;
};

export type Template = Record<string, unknown>;

/** The most occurrences one recurrence may have within one horizon (README, Recurrences). */
export const MAX_OCCURRENCES_PER_HORIZON = 100;
const DAY_MS = 86_400_000;

export const scheduleOf = (
  r: Pick<RecurrenceRow, "rule" | "start_local" | "end_local" | "timezone">,
): Schedule => ({
  rule: r.rule,
  start: r.start_local,
  end: r.end_local,
  timezone: r.timezone,
});

/** RECURRENCE_HORIZON_DAYS (contract §20, §22: 7 by default), whole days from 1 to 366. */
export function horizonDays(env: Env): number {
  const n = Number(env.RECURRENCE_HORIZON_DAYS ?? 7);
  return Number.isInteger(n) && n >= 1 && n <= 366 ? n : 7;
}

const TIME_FIELDS = ["complete_after", "complete_before", "scheduled_time"] as const;

/** The task bodies inside a template: itself, or an order's `tasks_data`. */
function taskBodies(kind: RecurrenceKind, t: Template): Template[] {
  if (kind === "task") return [t];
  return Array.isArray(t.tasks_data) ? (t.tasks_data as Template[]) : [];
}

/**
 * The template as stored: `recurrence` dropped, times as UTC ISO 8601 (they may have been sent
 * without an offset under `Accept-Timezone`; stored, they must not depend on a later header).
 */
export function normalizeTemplate(kind: RecurrenceKind, template: Template, zone: string | null): Template {
  const t = structuredClone(template);
  delete t.recurrence;
  for (const body of taskBodies(kind, t)) {
    for (const f of TIME_FIELDS) {
      if (typeof body[f] !== "string") continue;
      const ms = parseTimestamp(body[f] as string, zone);
      if (ms !== null) body[f] = new Date(ms).toISOString();
    }
  }
  return t;
}

/** The body of one occurrence: times moved to it, the recurrence's assignee over the template's. */
export function occurrenceBody(r: RecurrenceRow, occurrenceMs: number): Template {
  const t = JSON.parse(r.template) as Template;
  const schedule = scheduleOf(r);
  for (const body of taskBodies(r.kind, t)) {
    for (const f of TIME_FIELDS) {
      if (typeof body[f] !== "string") continue;
      const ms = Date.parse(body[f] as string);
      if (!Number.isNaN(ms)) body[f] = new Date(shiftToOccurrence(schedule, ms, occurrenceMs)).toISOString();
    }
    if (r.assignee_id && r.kind === "task") body.assignee = r.assignee_id;
    if (r.assignee_id && r.kind === "order" && body.assignee) body.assignee = r.assignee_id;
  }
  if (r.assignee_id && r.kind === "order") t.assignee = r.assignee_id;
  return t;
}

const isClaimRefused = (err: unknown) =>
  /UNIQUE constraint failed: recurrence_occurrences|FOREIGN KEY constraint failed/i.test(
    String((err as Error)?.message ?? err),
  );

export type Made =
  | { made: true; objectId: string; task?: TaskRow; order?: OrderWriteResult }
  | { made: false };

/**
 * Makes the occurrence at `occurrenceMs` as `principal` would with POST /tasks/ or POST
 * /orders/; `{made: false}` when it was already made (or the recurrence is gone).
 */
export async function makeOccurrence(
  env: Env,
  principal: Principal,
  r: RecurrenceRow,
  occurrenceMs: number,
  baseUrl: string,
  /** Written first in the same batch (the shortcut's recurrence row: both or neither). */
  prelude: D1PreparedStatement[] = [],
): Promise<Made> {
  const mark: RecurrenceMark = {
    recurrenceId: r.id,
    calendarTime: formatInZone(r.timezone, occurrenceMs),
    claim: (objectId, now) => [
      ...prelude,
      env.DB.prepare(
        "INSERT INTO recurrence_occurrences (recurrence_id, occurrence_at, object_id, created_at) VALUES (?, ?, ?, ?)",
      ).bind(r.id, occurrenceMs, objectId, now),
    ],
  };
  const body = occurrenceBody(r, occurrenceMs);
  try {
    if (r.kind === "task") {
      const task = await createTask(
        env,
        principal,
        body as TaskWriteBody,
        { zone: null, baseUrl },
        {},
        {
          recurrence: mark,
        },
      );
      return { made: true, objectId: task.id, task };
    }
    const [order] = await writeOrders(env, principal, [body as OrderWriteBody], {
      isArray: false,
      target: { kind: "post" },
      zone: null,
      baseUrl,
      recurrence: mark,
    });
    return { made: true, objectId: order.row.id, order };
  } catch (err) {
    if (isClaimRefused(err)) return { made: false };
    throw err;
  }
}

/**
 * Who the cron acts as: the recurrence's creator, with a dispatcher's reach over the account
 * (created_by of every made task is that user; README, Recurrences).
 */
export const creatorPrincipal = (r: RecurrenceRow): Principal => accountPrincipal(r.account_id, r.created_by);

/** Recurrences read per query, and how many are worked on at once. */
const SWEEP_PAGE = 100;
const SWEEP_CONCURRENCY = 6;
/** A run stops taking new pages after this long; the next minute's run goes on. */
const SWEEP_BUDGET_MS = 20_000;

/** Makes every due occurrence of one recurrence, then moves its `next_occurrence_at` on. */
async function sweepOne(env: Env, r: RecurrenceRow, horizonEnd: number, baseUrl: string) {
  const schedule = scheduleOf(r);
  const from = r.next_occurrence_at!;
  const due = occurrencesBetween(schedule, from, horizonEnd, MAX_OCCURRENCES_PER_HORIZON);
  const principal = creatorPrincipal(r);
  let made = 0;
  let skipped = 0;
  for (const at of due) {
    try {
      if ((await makeOccurrence(env, principal, r, at, baseUrl)).made) made++;
    } catch (err) {
      // The template no longer validates (its client or contact address was deleted, a
      // metafield definition changed, the assignee left): this occurrence is skipped and
      // logged, the later ones are still tried. Anything else is retried by the next run.
      if (!(err instanceof ValidationError)) throw err;
      skipped++;
      logLine({
        type: "recurrence_skipped",
        recurrence: r.id,
        occurrence_at: new Date(at).toISOString(),
        errors: JSON.stringify(err.body).slice(0, 1000),
      });
    }
  }
  const next = nextOccurrence(schedule, due.length ? due[due.length - 1] + 1 : from);
  // Guarded by updated_at: a PATCH in between computed its own next occurrence, which wins.
  await env.DB.prepare("UPDATE recurrences SET next_occurrence_at = ? WHERE id = ? AND updated_at = ?")
    .bind(next, r.id, r.updated_at)
    .run();
  return { made, skipped };
}

/**
 * The cron (src/index.ts `scheduled`): every active recurrence whose next occurrence falls
 * within the horizon gets its occurrences up to `now + RECURRENCE_HORIZON_DAYS`.
 */
export const sweepRecurrences = perDatabase(async function sweepRecurrences(env: Env, now = Date.now()) {
  const started = Date.now();
  const horizonEnd = now + horizonDays(env) * DAY_MS;
  const baseUrl = env.PUBLIC_BASE_URL ?? "";
  let recurrences = 0;
  let made = 0;
  let skipped = 0;
  const failed = new Set<string>();
  while (Date.now() - started < SWEEP_BUDGET_MS) {
    const { results } = await env.DB.prepare(
      `SELECT * FROM recurrences WHERE is_active = 1 AND next_occurrence_at IS NOT NULL
         AND next_occurrence_at <= ? ORDER BY next_occurrence_at, id LIMIT ?`,
    )
      .bind(horizonEnd, SWEEP_PAGE + failed.size)
      .all<RecurrenceRow>();
    const page = results.filter((r) => !failed.has(r.id));
    if (!page.length) break;
    await pool(page, SWEEP_CONCURRENCY, async (r) => {
      try {
        const out = await sweepOne(env, r, horizonEnd, baseUrl);
        made += out.made;
        skipped += out.skipped;
        recurrences++;
      } catch (err) {
        // Left for the next run; this run does not pick it again.
        failed.add(r.id);
        console.error(
          JSON.stringify({
            level: "error",
            type: "recurrence_sweep",
            recurrence: r.id,
            error: String(err),
          }),
        );
      }
    });
  }
  return { recurrences, made, skipped };
});
