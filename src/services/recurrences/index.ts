/**
 * Recurrences (contract §20): a rule, a local start in a zone, and the template of a task or an
 * order. Occurrences are made by the cron within the horizon (./occurrences.ts); a POST of a task
 * or an order with `recurrence` makes its first one at once.
 */

import { accountRow } from "../../db/account-rows";
import {
  firstOccurrence,
  nextOccurrence,
  occurrencesBetween,
  parseLocal,
  parseRule,
  type Schedule,
} from "../../domain/recurrence";
import { isTimeZone } from "../../domain/time-zones";
import { type FieldErrors, notFound, ValidationError } from "../../http/errors";
import { paginateByCreation } from "../../http/pagination";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { uuidv7 } from "../../lib/ids";
import type { OrderWriteBody } from "../../schemas/orders";
import type { TaskWriteBody } from "../../schemas/tasks";
import type { Principal } from "../auth/principal";
import { type OrderWriteResult, writeOrders } from "../orders";
import { type TaskRow, validateTaskBody } from "../tasks";
import { addError, MSG, RefSet, readLink, resolveRefs } from "../tasks/input";
import {
  horizonDays,
  MAX_OCCURRENCES_PER_HORIZON,
  makeOccurrence,
  normalizeTemplate,
  type RecurrenceKind,
  type RecurrenceRow,
  type Template,
} from "./occurrences";

export { type RecurrenceRow, sweepRecurrences } from "./occurrences";

export type ScheduleInput = {
  rule?: string;
  start?: string;
  end?: string | null;
  timezone?: string;
  assignee?: string | null;
};

export type RecurrenceInput = ScheduleInput & {
  kind?: RecurrenceKind;
  /** Already shape-checked by the caller as a task or an order body of `kind`. */
  template?: Template;
  is_active?: boolean;
};

type Ctx = { zone: string | null; baseUrl: string };
const DAY_MS = 86_400_000;
const LOCAL_FORMAT = "Enter a local date-time without offset: YYYY-MM-DDTHH:MM:SS (read in timezone).";

export function serializeRecurrence(r: RenderCtx, row: RecurrenceRow) {
  return {
    id: row.id,
    url: link(r, "recurrences", row.id),
    account: link(r, "accounts", row.account_id),
    rule: row.rule,
    start: row.start_local,
    end: row.end_local,
    timezone: row.timezone,
    assignee: link(r, "users", row.assignee_id),
    kind: row.kind,
    template: JSON.parse(row.template) as Template,
    is_active: Boolean(row.is_active),
    next_occurrence: row.is_active ? ts(r, row.next_occurrence_at) : null,
    created_by: link(r, "users", row.created_by),
    created_at: ts(r, row.created_at),
    updated_at: ts(r, row.updated_at),
  };
}

export async function getRecurrence(db: D1Database, p: Principal, id: string): Promise<RecurrenceRow> {
  return accountRow<RecurrenceRow>(db, "recurrences", p.accountId, id);
}

export function listRecurrences(
  db: D1Database,
  p: Principal,
  q: { kind?: RecurrenceKind; is_active?: "true" | "false"; cursor?: string; page_size?: number },
  url: string,
) {
  const where = ["account_id = ?"];
  const params: unknown[] = [p.accountId];
  if (q.kind) {
    where.push("kind = ?");
    params.push(q.kind);
  }
  if (q.is_active) {
    where.push("is_active = ?");
    params.push(q.is_active === "true" ? 1 : 0);
  }
  return paginateByCreation<RecurrenceRow>({
    db,
    select: "SELECT * FROM recurrences",
    where,
    params,
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}

type Checked = {
  rule: string;
  start: string;
  end: string | null;
  timezone: string;
  assigneeId: string | null;
  schedule: Schedule;
  first: number;
};

/**
 * Checks the schedule fields; errors go into `errors`. The rule must have an occurrence from
 * `start` on, and at most MAX_OCCURRENCES_PER_HORIZON in the horizon from its first occurrence
 * and from now (contract §22: past a limit, 400 naming it).
 */
async function checkSchedule(
  env: Env,
  p: Principal,
  f: Required<Pick<ScheduleInput, "rule" | "start">> & ScheduleInput,
  errors: FieldErrors,
  now: number,
): Promise<Checked | null> {
  const parsed = parseRule(f.rule);
  if (!parsed.ok) addError(errors, "rule", parsed.error);
  const start = parseLocal(f.start);
  if (start === null) addError(errors, "start", LOCAL_FORMAT);
  const end = f.end == null ? null : parseLocal(f.end);
  if (f.end != null && end === null) addError(errors, "end", LOCAL_FORMAT);
  if (start !== null && end !== null && end < start)
    addError(errors, "end", "end must not be earlier than start.");
  let timezone = f.timezone?.trim();
  if (timezone === undefined || timezone === "") {
    const account = await env.DB.prepare("SELECT timezone FROM accounts WHERE id = ?")
      .bind(p.accountId)
      .first<{ timezone: string }>();
    timezone = account?.timezone || "UTC";
  }
  if (!isTimeZone(timezone)) addError(errors, "timezone", `Unknown time zone: "${timezone.slice(0, 64)}".`);
  const refs = new RefSet();
  const assigneeId = readLink(errors, "assignee", f.assignee, "users", refs.users) ?? null;
  if (assigneeId) {
    const resolved = await resolveRefs(env.DB, p.accountId, refs);
    if (!resolved.users.has(assigneeId)) addError(errors, "assignee", MSG.notExist);
  }
  if (Object.keys(errors).length) return null;

  const schedule: Schedule = {
    rule: f.rule.trim().replace(/^RRULE:/i, ""),
    start: f.start,
    end: f.end ?? null,
    timezone,
  };
  const first = firstOccurrence(schedule);
  if (first === null) {
    addError(errors, "rule", "This rule has no occurrence from start on (within 10 years).");
    return null;
  }
  const horizon = horizonDays(env);
  for (const from of [first, Math.max(first, now)]) {
    const count = occurrencesBetween(
      schedule,
      from,
      from + horizon * DAY_MS,
      MAX_OCCURRENCES_PER_HORIZON + 1,
    ).length;
    if (count > MAX_OCCURRENCES_PER_HORIZON) {
      addError(
        errors,
        "rule",
        `This rule makes more than ${MAX_OCCURRENCES_PER_HORIZON} occurrences within the ${horizon}-day horizon; at most ${MAX_OCCURRENCES_PER_HORIZON} are allowed.`,
      );
      return null;
    }
  }
  return { ...schedule, end: schedule.end, assigneeId, schedule, first };
}

/** Checks a template exactly as POST /tasks/ or POST /orders/ checks a body; errors as theirs. */
async function templateErrors(
  env: Env,
  p: Principal,
  kind: RecurrenceKind,
  template: Template,
  ctx: Ctx,
): Promise<FieldErrors | null> {
  try {
    if (kind === "task") await validateTaskBody(env, p, template as TaskWriteBody, ctx.zone);
    else {
      if (template.external_id != null && template.external_id !== "") {
        return {
          external_id: ["Not allowed in a recurrence: every occurrence would update the same order."],
        };
      }
      await writeOrders(env, p, [template as OrderWriteBody], {
        isArray: false,
        target: { kind: "post" },
        zone: ctx.zone,
        baseUrl: ctx.baseUrl,
        validateOnly: true,
      });
    }
    return null;
  } catch (err) {
    if (err instanceof ValidationError && !Array.isArray(err.body)) return err.body;
    throw err;
  }
}

function insertStatement(db: D1Database, row: RecurrenceRow) {
  const cols = Object.keys(row) as (keyof RecurrenceRow)[];
  return db
    .prepare(
      `INSERT INTO recurrences (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")}) RETURNING *`,
    )
    .bind(...cols.map((c) => row[c]));
}

function newRow(
  p: Principal,
  kind: RecurrenceKind,
  c: Checked,
  template: Template,
  isActive: boolean,
  next: number | null,
  now: number,
): RecurrenceRow {
  return {
    id: uuidv7(now),
    account_id: p.accountId,
    kind,
    rule: c.rule,
    start_local: c.start,
    end_local: c.end,
    timezone: c.timezone,
    assignee_id: c.assigneeId,
    template: JSON.stringify(template),
    is_active: isActive ? 1 : 0,
    next_occurrence_at: next,
    created_by: p.userId,
    created_at: now,
    updated_at: now,
  };
}

/** POST /recurrences/: stores the recurrence; the cron makes its occurrences. */
export async function createRecurrence(env: Env, p: Principal, input: RecurrenceInput, ctx: Ctx) {
  const now = Date.now();
  const errors: FieldErrors = {};
  const kind = input.kind ?? "task";
  const template = input.template ?? {};
  const tErrors = await templateErrors(env, p, kind, template, ctx);
  if (tErrors) errors.template = tErrors;
  const checked = await checkSchedule(
    env,
    p,
    { ...input, rule: input.rule ?? "", start: input.start ?? "" },
    errors,
    now,
  );
  if (!checked || Object.keys(errors).length) throw new ValidationError(errors);
  const next = nextOccurrence(checked.schedule, Math.max(checked.first, now));
  const row = newRow(
    p,
    kind,
    checked,
    normalizeTemplate(kind, template, ctx.zone),
    input.is_active ?? true,
    next,
    now,
  );
  return (await insertStatement(env.DB, row).first<RecurrenceRow>())!;
}

/**
 * PATCH / PUT: only occurrences not yet made change. A new rule, start, end or zone (or turning
 * active again) sets the next occurrence from now on: what was made stays, nothing is backfilled.
 */
export async function updateRecurrence(env: Env, p: Principal, id: string, input: RecurrenceInput, ctx: Ctx) {
  const current = await getRecurrence(env.DB, p, id);
  const now = Date.now();
  const errors: FieldErrors = {};
  const kind = input.kind ?? current.kind;
  let template = JSON.parse(current.template) as Template;
  if (input.template !== undefined || input.kind !== undefined) {
    template = input.template ?? template;
    const tErrors = await templateErrors(env, p, kind, template, ctx);
    if (tErrors) errors.template = tErrors;
    template = normalizeTemplate(kind, template, ctx.zone);
  }
  const checked = await checkSchedule(
    env,
    p,
    {
      rule: input.rule ?? current.rule,
      start: input.start ?? current.start_local,
      end: input.end !== undefined ? input.end : current.end_local,
      timezone: input.timezone ?? current.timezone,
      assignee: input.assignee !== undefined ? input.assignee : current.assignee_id,
    },
    errors,
    now,
  );
  if (!checked || Object.keys(errors).length) throw new ValidationError(errors);
  const isActive = input.is_active ?? Boolean(current.is_active);
  const rescheduled =
    ["rule", "start", "end", "timezone"].some((k) => input[k as keyof RecurrenceInput] !== undefined) ||
    (isActive && !current.is_active);
  const next = rescheduled
    ? nextOccurrence(checked.schedule, Math.max(checked.first, now))
    : current.next_occurrence_at;
  const row = await env.DB.prepare(
    `UPDATE recurrences SET kind = ?, rule = ?, start_local = ?, end_local = ?, timezone = ?, assignee_id = ?,
       template = ?, is_active = ?, next_occurrence_at = ?, updated_at = ?
     WHERE id = ? AND account_id = ? RETURNING *`,
  )
    .bind(
      kind,
      checked.rule,
      checked.start,
      checked.end,
      checked.timezone,
      checked.assigneeId,
      JSON.stringify(template),
      isActive ? 1 : 0,
      next,
      // Strictly later than before: the sweep's guard compares updated_at.
      Math.max(now, current.updated_at + 1),
      id,
      p.accountId,
    )
    .first<RecurrenceRow>();
  if (!row) throw notFound();
  return row;
}

/** DELETE: no more occurrences; the tasks and orders made keep their `recurrence` link. */
export async function deleteRecurrence(db: D1Database, p: Principal, id: string) {
  await getRecurrence(db, p, id);
  await db.prepare("DELETE FROM recurrences WHERE id = ? AND account_id = ?").bind(id, p.accountId).run();
}

/**
 * The shortcut of POST /tasks/ and POST /orders/ with `recurrence` (contract §20): the body
 * without `recurrence` becomes the template, and the first occurrence is made at once through
 * the same claim as the cron's, so the cron never makes it again. The recurrence row leads that
 * batch (the claim's foreign key needs it first): the recurrence, its claim and the first task
 * or order commit together or not at all, so a failure or a crash leaves no recurrence behind
 * and the error is the caller's, as for a plain POST.
 */
async function createWithFirst<T>(
  env: Env,
  p: Principal,
  kind: RecurrenceKind,
  body: Template & { recurrence: ScheduleInput & { rule: string; start: string } },
  ctx: Ctx,
  pick: (made: Awaited<ReturnType<typeof makeOccurrence>>, row: RecurrenceRow) => Promise<T>,
): Promise<T> {
  const { recurrence, ...template } = body;
  const now = Date.now();
  const errors: FieldErrors = (await templateErrors(env, p, kind, template, ctx)) ?? {};
  const scheduleErrors: FieldErrors = {};
  const checked = await checkSchedule(env, p, recurrence, scheduleErrors, now);
  if (Object.keys(scheduleErrors).length) errors.recurrence = scheduleErrors;
  if (!checked || Object.keys(errors).length) throw new ValidationError(errors);
  const next = nextOccurrence(checked.schedule, Math.max(checked.first + 1, now));
  const row = newRow(p, kind, checked, normalizeTemplate(kind, template, ctx.zone), true, next, now);
  const made = await makeOccurrence(env, p, row, checked.first, ctx.baseUrl, [insertStatement(env.DB, row)]);
  return pick(made, row);
}

export function createRecurringTask(
  env: Env,
  p: Principal,
  body: TaskWriteBody & { recurrence: ScheduleInput & { rule: string; start: string } },
  ctx: Ctx,
): Promise<TaskRow> {
  return createWithFirst(env, p, "task", body, ctx, async (made) => {
    if (!made.made || !made.task) throw new Error("first occurrence not made");
    return made.task;
  });
}

export function createRecurringOrder(
  env: Env,
  p: Principal,
  body: OrderWriteBody & { recurrence: ScheduleInput & { rule: string; start: string } },
  ctx: Ctx,
): Promise<OrderWriteResult> {
  return createWithFirst(env, p, "order", body, ctx, async (made) => {
    if (!made.made || !made.order) throw new Error("first occurrence not made");
    return made.order;
  });
}
