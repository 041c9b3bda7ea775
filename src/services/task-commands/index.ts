import { z } from "@hono/zod-openapi";
import { inStatement } from "../../db/in-list";
import { accountEnv, perDatabase } from "../../db/shards";
import { uuidBytes } from "../../db/uuid-bytes";
import { TASK_ACTIONS } from "../../domain/task-state-machine";
import { taskWriter } from "../../durable-objects/task/client";
import { type FieldErrors, fieldError, ValidationError } from "../../http/errors";
import { dateTimeInput } from "../../http/openapi";
import { type Page, paginateByCreation } from "../../http/pagination";
import { parseTimestamp } from "../../http/timezones";
import { hyperlinkSchema, parseHyperlink } from "../../http/urls";
import { uuidv7 } from "../../lib/ids";
import type { Principal } from "../auth/principal";
import type { WriteProof } from "../auth/tokens";
import type { TaskRow } from "../tasks/types";
import { overdueScheduledTasks } from "./apply";
import { COMMAND_SELECT } from "./apply/statements";
import { applyGrouped, applyTogether } from "./batch";
import { applyPendingRows, rowToInput } from "./recovery";
import { storedCommands } from "./store";
import type { Actor, CommandInput, CommandOutcome, CommandRow } from "./types";

export const MAX_COMMANDS_PER_REQUEST = 500;
const DOES_NOT_EXIST = "Invalid hyperlink - Object does not exist.";
const NO_MATCH = "Invalid hyperlink - No URL match.";
const ROUTE_ARCHIVED = "This route is archived: its stops cannot change.";

export const PointSchema = z
  .object({
    type: z.literal("Point"),
    coordinates: z.tuple([z.number().min(-180).max(180), z.number().min(-90).max(90)]),
  })
  .openapi("Point", { description: "GeoJSON point: [longitude, latitude]." });

export const TaskDataSchema = z
  .object({
    position: z.number().nullable(),
    scheduled_time: dateTimeInput().nullable(),
    duration: z
      .string()
      .regex(/^\d{1,3}:[0-5]\d:[0-5]\d$/, "Duration has wrong format. Use HH:MM:SS.")
      .nullable(),
    metafields: z.record(z.string(), z.any()),
    address: z.object({ raw_address: z.string().optional(), location: PointSchema.optional() }).passthrough(),
    contact_address: z.object({ address: z.record(z.string(), z.any()).optional() }).passthrough(),
    route: hyperlinkSchema("routes", "Route URL, or null.").nullable(),
  })
  .partial()
  .openapi("TaskData", {
    description: "Task changes carried by `update` (and `reassign`: position). Interface 2.7.",
  });

export const TaskCommandInputSchema = z.object({
  task: hyperlinkSchema("tasks", "Task URL."),
  external_id: z
    .string()
    .min(1)
    .max(255)
    .openapi({ description: "Client-generated, unique per account: the idempotency key." }),
  time: dateTimeInput().openapi({ description: "When the interaction happened (ISO 8601)." }),
  action: z.enum(TASK_ACTIONS),
  assignee: hyperlinkSchema("users", "User URL; required for assign and reassign.").nullable().optional(),
  task_data: TaskDataSchema.optional(),
  notes: z.string().max(10_000).optional(),
  location: PointSchema.nullable().optional(),
});

export type TaskCommandBody = z.infer<typeof TaskCommandInputSchema>;

export const actorOf = (p: Principal): Actor => ({
  userId: p.userId,
  role: p.role,
  accountId: p.accountId,
  allowWorkerReordering: p.account.featureAllowWorkerReordering,
  transitActiveLimit: p.account.transitActiveLimit,
  failedReasons: p.account.failedReasons,
});

/**
 * Resolves references and checks idempotency keys for a whole request before anything is
 * applied: any invalid item → 400 with errors aligned to the input, nothing applied.
 */
function toCommands(
  items: TaskCommandBody[],
  taskIds: (string | null)[],
  assigneeIds: (string | null)[],
  times: number[],
  stored: Map<string, CommandRow>,
  timeZone: string | null,
  routeIds: (string | null | undefined)[],
): CommandInput[] {
  return items.map((it, i) => {
    const td: Record<string, unknown> = { ...(it.task_data ?? {}) };
    if (typeof td.scheduled_time === "string")
      td.scheduled_time = parseTimestamp(td.scheduled_time, timeZone);
    return {
      id: stored.get(it.external_id)?.id ?? uuidv7(),
      externalId: it.external_id,
      taskId: taskIds[i]!,
      action: it.action,
      time: times[i],
      assigneeId: assigneeIds[i],
      taskData: td,
      routeId: routeIds[i],
      notes: it.notes ?? "",
      location: it.location ?? null,
    };
  });
}

async function resolve(
  env: Env,
  p: Principal,
  items: TaskCommandBody[],
  timeZone: string | null,
  opts: { lookups: boolean } = { lookups: true },
) {
  const errors: FieldErrors[] = items.map(() => ({}));
  const add = (i: number, field: string, msg: string) => {
    const list = (errors[i][field] as string[]) ?? [];
    list.push(msg);
    errors[i][field] = list;
  };
  const taskIds = items.map((it, i) => {
    const id = parseHyperlink(it.task, "tasks");
    if (!id) add(i, "task", NO_MATCH);
    return id;
  });
  const assigneeIds = items.map((it, i) => {
    if (it.assignee === undefined || it.assignee === null) {
      if (it.action === "assign" || it.action === "reassign")
        add(i, "assignee", `This field is required for ${it.action}.`);
      return null;
    }
    const id = parseHyperlink(it.assignee, "users");
    if (!id) add(i, "assignee", NO_MATCH);
    return id;
  });
  const times = items.map((it, i) => {
    const t = parseTimestamp(it.time, timeZone);
    if (t === null) add(i, "time", "Datetime has wrong format. Use ISO 8601 with Z or an offset.");
    return t ?? 0;
  });
  items.forEach((it, i) => {
    if (it.action === "update" && !it.task_data) add(i, "task_data", "This field is required for update.");
    const st = it.task_data?.scheduled_time;
    if (typeof st === "string" && parseTimestamp(st, timeZone) === null) {
      errors[i].task_data = {
        scheduled_time: ["Datetime has wrong format. Use ISO 8601 with Z or an offset."],
      };
    }
  });
  // task_data.route (interface §2.7): a route URL of the account (checked with the lookups), or null.
  const routeIds = items.map((it, i) => {
    if (!it.task_data || !("route" in it.task_data)) return undefined;
    const value = (it.task_data as Record<string, unknown>).route;
    if (value === null || value === undefined) return null;
    const id = parseHyperlink(value, "routes");
    if (!id) errors[i].task_data = { ...(errors[i].task_data as object), route: [NO_MATCH] };
    return id ?? null;
  });

  if (!opts.lookups) {
    // The task's object checks the task and the idempotency key itself (applyOne).
    if (errors.some((e) => Object.keys(e).length)) return { errors };
    return {
      commands: toCommands(items, taskIds, assigneeIds, times, new Map(), timeZone, routeIds),
      stored: new Map<string, CommandRow>(),
      tasks: new Map<string, TaskRow>(),
    };
  }
  const notNull = <T>(xs: (T | null)[]) => xs.filter((x): x is T => x !== null);
  // The lookups in one batch: one round trip.
  const [tasksRes, usersRes, existingRes, routesRes] = await env.DB.batch<
    TaskRow & CommandRow & { state: string }
  >([
    inStatement(
      env.DB,
      // Whole rows: each is handed to its task's object as a hint (saves it a read).
      "SELECT * FROM tasks WHERE account_id = ? AND id IN (IN_LIST)",
      [p.accountId],
      notNull(taskIds),
    ),
    inStatement(
      env.DB,
      "SELECT user_id AS id FROM account_roles WHERE account_id = ? AND is_active = 1 AND state = 'active' AND user_id IN (IN_LIST)",
      [p.accountId],
      notNull(assigneeIds),
    ),
    inStatement(
      env.DB,
      `${COMMAND_SELECT} WHERE account_id = ${uuidBytes()} AND external_id IN (IN_LIST)`,
      [p.accountId],
      items.map((it) => it.external_id),
    ),
    inStatement(
      env.DB,
      "SELECT id, state FROM routes WHERE account_id = ? AND id IN (IN_LIST)",
      [p.accountId],
      routeIds.filter((x): x is string => typeof x === "string"),
    ),
  ]);
  const routeStates = new Map(
    (routesRes.results as { id: string; state: string }[]).map((r) => [r.id, r.state]),
  );
  routeIds.forEach((id, i) => {
    if (!id) return;
    const state = routeStates.get(id);
    if (state === undefined)
      errors[i].task_data = { ...(errors[i].task_data as object), route: [DOES_NOT_EXIST] };
    else if (state === "archived")
      errors[i].task_data = { ...(errors[i].task_data as object), route: [ROUTE_ARCHIVED] };
  });
  const tasks = new Map((tasksRes.results as TaskRow[]).map((t) => [t.id, t]));
  const users = usersRes.results;
  const existing = existingRes.results as CommandRow[];
  const userSet = new Set(users.map((r) => r.id));
  const stored = new Map(existing.map((r) => [r.external_id, r]));
  const seen = new Map<string, { taskId: string | null; action: string }>();
  items.forEach((it, i) => {
    if (taskIds[i] && !tasks.has(taskIds[i]!)) add(i, "task", DOES_NOT_EXIST);
    if (assigneeIds[i] && !userSet.has(assigneeIds[i]!)) add(i, "assignee", DOES_NOT_EXIST);
    const prior =
      stored.get(it.external_id) ??
      (seen.has(it.external_id)
        ? { task_id: seen.get(it.external_id)!.taskId, action: seen.get(it.external_id)!.action }
        : null);
    if (prior && (prior.task_id !== taskIds[i] || prior.action !== it.action)) {
      add(i, "external_id", "A command with this external_id already exists for another task or action.");
    }
    seen.set(it.external_id, { taskId: taskIds[i], action: it.action });
  });
  if (errors.some((e) => Object.keys(e).length)) return { errors };

  const commands = toCommands(items, taskIds, assigneeIds, times, stored, timeZone, routeIds);
  return { commands, stored, tasks };
}

/** Groups by task keeping each task's order; tasks run in parallel, each in its own TaskDO. */
function byTask(commands: CommandInput[]) {
  const groups = new Map<string, number[]>();
  commands.forEach((c, i) => {
    const g = groups.get(c.taskId) ?? [];
    g.push(i);
    groups.set(c.taskId, g);
  });
  return groups;
}

export type SubmitResult = { rows: CommandRow[]; allReplays: boolean };
type SubmitOptions = { timeZone: string | null; isArray: boolean; baseUrl: string };

/** One command without an assignee or route to look up: its task's object checks it (one round trip). */
export const isSingle = (items: TaskCommandBody[]) =>
  items.length === 1 && !items[0].assignee && !items[0].task_data?.route;

/**
 * The call a single command makes to its task's object. With `proof` (http/first-batch.ts), the
 * caller's token check rides on that object's batch and `p` is the principal the token proved
 * before: the caller settles `token` (the row the batch read) before it uses anything else of
 * the answer, and on `tokenMismatch` (nothing was written) submits again once it knows whom
 * the token proves now. Then `finishSingle` makes the answer.
 */
export async function applySingle(
  env: Env,
  p: Principal,
  item: TaskCommandBody,
  opts: SubmitOptions,
  proof?: WriteProof,
) {
  env = await accountEnv(env, p.accountId);
  const r = await resolve(env, p, [item], opts.timeZone, { lookups: false });
  if ("errors" in r) throw new ValidationError(opts.isArray ? r.errors! : r.errors![0]);
  const c = r.commands[0];
  if (proof) return applyTogether(env, actorOf(p), c, opts.baseUrl, proof);
  return taskWriter(env, c.taskId).applyOne({
    actor: actorOf(p),
    taskId: c.taskId,
    command: c,
    baseUrl: opts.baseUrl,
    proof,
  });
}

/** The answer to a single command (see applySingle): its row, or the field error it got. */
export async function finishSingle(
  env: Env,
  one: Awaited<ReturnType<typeof applySingle>>,
  opts: SubmitOptions,
): Promise<SubmitResult> {
  if (one.error) throw new ValidationError(opts.isArray ? [one.error] : one.error);
  return {
    rows: await settlePending(env, [one.outcome!.row], opts.baseUrl),
    allReplays: one.outcome!.replay,
  };
}

export async function submitCommands(
  env: Env,
  p: Principal,
  items: TaskCommandBody[],
  opts: SubmitOptions,
): Promise<SubmitResult> {
  if (items.length > MAX_COMMANDS_PER_REQUEST) {
    throw new ValidationError({
      non_field_errors: [`Too many commands: at most ${MAX_COMMANDS_PER_REQUEST} per request.`],
    });
  }
  if (isSingle(items)) return finishSingle(env, await applySingle(env, p, items[0], opts), opts);
  env = await accountEnv(env, p.accountId);
  const r = await resolve(env, p, items, opts.timeZone);
  if ("errors" in r) throw new ValidationError(opts.isArray ? r.errors! : r.errors![0]);
  const actor = actorOf(p);
  const results: CommandOutcome[] = new Array(items.length);
  // Replays are answered from what is stored and never reach a task's object; a repeated
  // external_id inside the request is a replay of its first occurrence.
  const first = new Map<string, number>();
  const fresh: number[] = [];
  r.commands.forEach((c, i) => {
    const storedRow = r.stored.get(c.externalId);
    if (storedRow) results[i] = { row: storedRow, replay: true };
    else if (!first.has(c.externalId)) {
      first.set(c.externalId, i);
      fresh.push(i);
    }
  });
  const groups = [...byTask(fresh.map((i) => r.commands[i])).entries()];
  const outcomes = await applyGrouped(
    env,
    actor,
    groups.map(([taskId, idx]) => ({
      taskId,
      commands: idx.map((j) => r.commands[fresh[j]]),
      task: r.tasks.get(taskId),
    })),
    opts.baseUrl,
  );
  for (const [g, [, idx]] of groups.entries()) {
    for (const [k, o] of outcomes[g].entries()) results[fresh[idx[k]]] = o;
  }
  r.commands.forEach((c, i) => {
    if (!results[i]) results[i] = { row: results[first.get(c.externalId)!].row, replay: true };
  });
  return {
    rows: await settlePending(
      env,
      results.map((o) => o.row),
      opts.baseUrl,
    ),
    allReplays: results.every((o) => o.replay),
  };
}

/**
 * A synchronous replay of a command still `pending` (its asynchronous run was lost or has not
 * happened yet) applies it now instead of answering the stale row: a client that retries
 * without `Prefer: respond-async` wants the outcome.
 */
async function settlePending(env: Env, rows: CommandRow[], baseUrl: string): Promise<CommandRow[]> {
  if (!rows.some((row) => row.state === "pending")) return rows;
  const applied = await applyPendingRows(env, rows, baseUrl);
  const again = await storedCommands(
    env,
    rows[0].account_id,
    rows.filter((row) => row.state === "pending" && !applied.has(row.id)).map((row) => row.external_id),
  );
  const byId = new Map(again.map((row) => [row.id, row]));
  return rows.map((row) => applied.get(row.id)?.row ?? byId.get(row.id) ?? row);
}

export type PendingMessage = { actor: Actor; taskId: string; externalIds: string[]; baseUrl: string };

/**
 * Asynchronous mode (`Prefer: respond-async`): stores every command as `pending` (a replay
 * keeps its stored row) and queues one message per task; the consumer applies them through
 * the same TaskDO path.
 */
export async function submitCommandsAsync(
  env: Env,
  p: Principal,
  items: TaskCommandBody[],
  opts: { timeZone: string | null; isArray: boolean; baseUrl: string },
): Promise<CommandRow[]> {
  if (items.length > MAX_COMMANDS_PER_REQUEST) {
    throw new ValidationError({
      non_field_errors: [`Too many commands: at most ${MAX_COMMANDS_PER_REQUEST} per request.`],
    });
  }
  const r = await resolve(env, p, items, opts.timeZone);
  if ("errors" in r) throw new ValidationError(opts.isArray ? r.errors! : r.errors![0]);
  const actor = actorOf(p);
  const now = Date.now();
  await env.DB.batch(
    r.commands.map((c) =>
      env.DB.prepare(
        `INSERT INTO task_commands (id, account_id, task_id, external_id, action, time, assignee_id, task_data, notes, location,
          user_id, state, error_message, created_at, updated_at)
         VALUES (${uuidBytes()}, ${uuidBytes()}, ${uuidBytes()}, ?, ?, ?, ${uuidBytes()}, ?, ?, ?, ${uuidBytes()}, 'pending', '', ?, ?)
         ON CONFLICT (account_id, external_id) DO NOTHING`,
      ).bind(
        c.id,
        p.accountId,
        c.taskId,
        c.externalId,
        c.action,
        c.time,
        c.assigneeId,
        JSON.stringify(c.taskData),
        c.notes,
        c.location === null ? null : JSON.stringify(c.location),
        p.userId,
        now,
        now,
      ),
    ),
  );
  const messages = [...byTask(r.commands).entries()].map(([taskId, idx]) => ({
    body: {
      actor,
      taskId,
      externalIds: idx.map((i) => r.commands[i].externalId),
      baseUrl: opts.baseUrl,
    } satisfies PendingMessage,
  }));
  try {
    for (let i = 0; i < messages.length; i += 100)
      await env.COMMANDS_QUEUE.sendBatch(messages.slice(i, i + 100));
  } catch (err) {
    // The rows are written: the cron sweep (or a synchronous replay) applies them, so the
    // client's 202 stays true. Logged as an alert: the queue is refusing messages.
    console.error(
      JSON.stringify({
        level: "error",
        alert: "queue_send_failed",
        queue: "fd-task-commands",
        error: String(err),
      }),
    );
  }
  const results = await storedCommands(
    env,
    p.accountId,
    items.map((it) => it.external_id),
  );
  const byExt = new Map(results.map((row) => [row.external_id, row]));
  return items.map((it) => byExt.get(it.external_id)!);
}

/** Rebuilds the commands of a queue message from their stored rows (the queue carries only keys). */
export async function pendingCommands(env: Env, msg: PendingMessage): Promise<CommandInput[]> {
  env = await accountEnv(env, msg.actor.accountId);
  const results = await storedCommands(env, msg.actor.accountId, msg.externalIds);
  const byExt = new Map(results.map((r) => [r.external_id, r]));
  return msg.externalIds
    .map((e) => byExt.get(e))
    .filter((r): r is CommandRow => !!r)
    .map(rowToInput);
}

export async function getCommand(env: Env, p: Principal, id: string) {
  const row = await env.DB.prepare(
    `${COMMAND_SELECT} WHERE id = ${uuidBytes()} AND account_id = ${uuidBytes()}${p.role === "worker" ? ` AND user_id = ${uuidBytes()}` : ""}`,
  )
    .bind(id, p.accountId, ...(p.role === "worker" ? [p.userId] : []))
    .first<CommandRow>();
  return row;
}

/** Cron: a `scheduled` task still waiting a minute past its time lost its alarm; arm it now. */
export const rearmOverdueSchedules = perDatabase(async function rearmOverdueSchedules(
  env: Env,
): Promise<number> {
  const overdue = await overdueScheduledTasks(env);
  await Promise.all(
    overdue.map((t) =>
      taskWriter(env, t.id).armSchedule({
        accountId: t.account_id,
        taskId: t.id,
        at: Date.now(),
        baseUrl: env.PUBLIC_BASE_URL || "",
      }),
    ),
  );
  return overdue.length;
});

export type CommandListQuery = {
  task?: string;
  user?: string;
  state?: string;
  action?: string;
  created_at__gte?: string;
  cursor?: string;
  page_size?: number;
};

/** `GET /task_commands/` (contract §6 filters); a worker lists the commands it sent. */
export async function listCommands(
  env: Env,
  p: Principal,
  q: CommandListQuery,
  ctx: { url: string; timeZone: string | null },
): Promise<Page<CommandRow>> {
  const where = [`account_id = ${uuidBytes()}`];
  const params: unknown[] = [p.accountId];
  const add = (sql: string, value: unknown) => {
    where.push(sql);
    params.push(value);
  };
  if (p.role === "worker") add(`user_id = ${uuidBytes()}`, p.userId);
  // A filter sent empty is malformed, as on every other list (`?created_at__gte=` is 400, not all).
  if (q.task !== undefined)
    add(`task_id = ${uuidBytes()}`, parseHyperlink(q.task, "tasks") ?? fail("task", NO_MATCH));
  if (q.user !== undefined)
    add(`user_id = ${uuidBytes()}`, parseHyperlink(q.user, "users") ?? fail("user", NO_MATCH));
  if (q.state) add("state = ?", q.state);
  if (q.action) add("action = ?", q.action);
  if (q.created_at__gte !== undefined) {
    add(
      "created_at >= ?",
      parseTimestamp(q.created_at__gte, ctx.timeZone) ??
        fail("created_at__gte", "Datetime has wrong format."),
    );
  }
  return paginateByCreation<CommandRow>({
    db: env.DB,
    select: COMMAND_SELECT,
    // Qualified: a bare `id` in ORDER BY is the select list's text form, which no index holds.
    idExpr: "task_commands.id",
    idParam: uuidBytes(),
    where,
    params,
    cursor: q.cursor,
    pageSize: q.page_size,
    url: ctx.url,
  });
}

function fail(field: string, message: string): never {
  throw fieldError(field, message);
}
