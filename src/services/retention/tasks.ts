/**
 * Finished tasks past their account's `data_retention_days` (contract §23): archived with all
 * that belongs to them alone, then removed, their files in R2 too. One archive line per task:
 * `{task, commands, documents, signatures, form_responses, notification_sends, order?}`, the
 * order riding with the last of its tasks to go (an order goes with its last task). Nothing is
 * left pointing at a removed task: trackers drop it from their lists, recurrences' occurrence
 * claims of it go; routes and route optimizations never pointed at it (a task names its route,
 * and an optimization's result is history, written as URLs).
 */

import { IN_JSON } from "../../db/in-list";
import { uuidBytes } from "../../db/uuid-bytes";
import { EITHER_KIND } from "../files/types";
import { COMMAND_SELECT } from "../task-commands/apply/statements";
import type { ArchiveSource } from "./archive";
import { deleteByIds } from "./archive";
import { asLine } from "./sources";

const FINAL = "('completed', 'failed', 'cancelled')";
const DAY_MS = 86_400_000;

type Row = Record<string, unknown> & { id: string };

/** Accounts that keep finished tasks a bounded time, with that time. */
/** The accounts that set `data_retention_days` (accounts_retention_idx holds only those). */
export const RETAINING_ACCOUNTS_SQL =
  "SELECT id, data_retention_days FROM accounts WHERE data_retention_days IS NOT NULL";

export async function retainingAccounts(db: D1Database) {
  const { results } = await db
    .prepare(RETAINING_ACCOUNTS_SQL)
    .all<{ id: string; data_retention_days: number }>();
  return results;
}

const cutoff = (days: number, now: number) => now - days * DAY_MS;

/** The oldest finished task of the account past its window (its last change), or null. */
export async function oldestFinishedTask(db: D1Database, accountId: string, days: number, now: number) {
  return db
    .prepare(
      `SELECT id, updated_at FROM tasks WHERE account_id = ? AND state IN ${FINAL} AND updated_at < ?
       ORDER BY updated_at, id LIMIT 1`,
    )
    .bind(accountId, cutoff(days, now))
    .first<{ id: string; updated_at: number }>();
}

/** The same over a column of UUIDs stored as bytes (db/uuid-bytes.ts). */
const inUuids = (col: string) => `${col} IN (SELECT ${uuidBytes("value")} FROM json_each(?))`;

export function taskSource(days: number, now: number): ArchiveSource {
  return {
    kind: "tasks",
    async read(env, accountId, day, limit) {
      const { results } = await env.DB.prepare(
        `SELECT * FROM tasks WHERE account_id = ? AND state IN ${FINAL} AND updated_at >= ? AND updated_at < ?
         ORDER BY updated_at, id LIMIT ?`,
      )
        .bind(accountId, day.start, Math.min(day.end, cutoff(days, now)), limit)
        .all<Row>();
      return results;
    },
    async lines(env, rows) {
      const db = env.DB;
      const tasks = rows as Row[];
      if (!tasks.length) return [];
      const accountId = tasks[0].account_id as string; // a part is one account's
      const ids = JSON.stringify(tasks.map((t) => t.id));
      const orderIds = JSON.stringify([...new Set(tasks.map((t) => t.order_id).filter(Boolean))]);
      const [commands, files, responses, sends, orders] = await db.batch([
        db
          .prepare(`${COMMAND_SELECT} WHERE ${inUuids("task_id")} ORDER BY created_at, task_commands.id`)
          .bind(ids),
        // The account named (and both kinds): the indexes these tables have lead with it.
        db
          .prepare(
            `SELECT * FROM attachments WHERE account_id = ? AND ${EITHER_KIND} AND ${IN_JSON("task_id")} ORDER BY created_at, id`,
          )
          .bind(accountId, ids),
        db
          .prepare(
            // Named: for its sort alone the planner would walk every response of the account.
            `SELECT * FROM form_responses INDEXED BY form_responses_account_task_idx
             WHERE account_id = ? AND ${IN_JSON("task_id")} ORDER BY created_at, id`,
          )
          .bind(accountId, ids),
        db
          .prepare(`SELECT * FROM notification_sends WHERE ${IN_JSON("task_id")} ORDER BY created_at, id`)
          .bind(ids),
        // Orders none of whose tasks stays: they go with the last of these tasks.
        db
          .prepare(
            `SELECT * FROM orders o WHERE ${IN_JSON("o.id")}
             AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.order_id = o.id AND t.id NOT IN (SELECT value FROM json_each(?)))`,
          )
          .bind(orderIds, ids),
      ]);
      const by = (result: D1Result, key: string) => {
        const m = new Map<string, Row[]>();
        for (const r of result.results as Row[]) {
          const k = r[key] as string;
          m.get(k)?.push(r) ?? m.set(k, [r]);
        }
        return m;
      };
      const commandsOf = by(commands, "task_id");
      const filesOf = by(files, "task_id");
      const responsesOf = by(responses, "task_id");
      const sendsOf = by(sends, "task_id");
      const lastOfOrder = new Map<string, string>();
      for (const t of tasks) if (t.order_id) lastOfOrder.set(t.order_id as string, t.id);
      const orderRows = new Map((orders.results as Row[]).map((o) => [o.id, o]));
      return tasks.map((t) => {
        const mine = filesOf.get(t.id) ?? [];
        const order =
          t.order_id && lastOfOrder.get(t.order_id as string) === t.id
            ? orderRows.get(t.order_id as string)
            : undefined;
        return {
          id: t.id,
          task: asLine(t),
          commands: (commandsOf.get(t.id) ?? []).map(asLine),
          documents: mine.filter((f) => f.kind === "document").map(asLine),
          signatures: mine.filter((f) => f.kind === "signature").map(asLine),
          form_responses: (responsesOf.get(t.id) ?? []).map(asLine),
          notification_sends: (sendsOf.get(t.id) ?? []).map(asLine),
          ...(order ? { order: asLine(order) } : {}),
        };
      });
    },
    async remove(env, accountId, lines) {
      const db = env.DB;
      const ids = lines.map((l) => l.id as string);
      if (!ids.length) return;
      const list = JSON.stringify(ids);
      const orders = lines.flatMap((l) => (l.order ? [(l.order as Row).id] : []));
      const recurrences = [
        ...new Set(
          lines
            .flatMap((l) => [l.task as Row, l.order as Row | undefined])
            .flatMap((r) => (r && typeof r.recurrence_id === "string" ? [r.recurrence_id] : [])),
        ),
      ];
      const keys = lines.flatMap((l) =>
        [...(l.documents as Row[]), ...(l.signatures as Row[])].flatMap((f) =>
          [f.key, f.thumbnail_key].filter((k): k is string => typeof k === "string" && k !== ""),
        ),
      );
      // Files first: a crash after this leaves rows whose files are gone, and the next run
      // (the part is still `written`) deletes the rows; never the other way round.
      for (let i = 0; i < keys.length; i += 1000) await env.FILES.delete(keys.slice(i, i + 1000));
      await db.batch([
        db
          .prepare(`DELETE FROM task_commands WHERE account_id = ${uuidBytes()} AND ${inUuids("task_id")}`)
          .bind(accountId, list),
        db
          .prepare(
            `DELETE FROM attachments WHERE account_id = ? AND ${EITHER_KIND} AND ${IN_JSON("task_id")}`,
          )
          .bind(accountId, list),
        db
          .prepare(`DELETE FROM form_responses WHERE account_id = ? AND ${IN_JSON("task_id")}`)
          .bind(accountId, list),
        db
          .prepare(`DELETE FROM notification_sends WHERE account_id = ? AND ${IN_JSON("task_id")}`)
          .bind(accountId, list),
        // By the recurrences that made them: the table's one index leads with the recurrence.
        db
          .prepare(
            `DELETE FROM recurrence_occurrences WHERE ${IN_JSON("recurrence_id")} AND ${IN_JSON("object_id")}`,
          )
          .bind(JSON.stringify(recurrences), JSON.stringify([...ids, ...orders])),
        // Trackers keep showing the tasks that stay.
        db
          .prepare(
            `UPDATE trackers SET task_ids = (SELECT json_group_array(value) FROM json_each(trackers.task_ids)
               WHERE value NOT IN (SELECT value FROM json_each(?1))), updated_at = ?2
             WHERE account_id = ?3 AND EXISTS (SELECT 1 FROM json_each(trackers.task_ids) WHERE value IN (SELECT value FROM json_each(?1)))`,
          )
          .bind(list, Date.now(), accountId),
        ...deleteByIds(db, "tasks", ids),
        ...deleteByIds(db, "orders", orders),
      ]);
    },
  };
}
