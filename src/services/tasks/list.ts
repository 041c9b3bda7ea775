import { TASK_STATES } from "../../domain/task-state-machine";
import { type FieldErrors, ValidationError } from "../../http/errors";
import { DEFAULT_PAGE_SIZE, type Page } from "../../http/pagination";
import { isDay, parseTimestamp, wallToInstant } from "../../http/timezones";
import { type Collection, parseHyperlink } from "../../http/urls";
import { base64url, fromBase64url } from "../../lib/crypto";
import { isUuid } from "../../lib/ids";
import { metafieldFilterKey, type TaskListQueryInput } from "../../schemas/tasks";
import { isDispatcher, type Principal } from "../auth/principal";
import { addError } from "./input";
import { EXPANDS, ORDERINGS, TASK_CATEGORIES, type TaskRow } from "./types";

/**
 * GET /tasks/: filters (interface §4.6), `ordering` and keyset pagination (contract §4).
 *
 * Every query is `account_id = ? AND ...` and every index of `tasks` leads with account_id, so
 * a list is never a scan of the table (test/tasks/query-plan.test.ts checks the plan of every
 * filter and ordering). Pages continue from `(sort value, id)` with a row-value comparison,
 * `(col, id) > (?, ?)`, which SQLite turns into a range of the `(account_id, col, id)` index:
 * page 1000 costs what page 1 costs.
 *
 * Nullable sort columns (complete_after, complete_before, position): tasks without a value come
 * last in both directions. Sorting on `COALESCE(col, sentinel)` would need an expression index
 * to be served; instead a list walks two index ranges in turn, "col IS NOT NULL" (ordered by
 * col, id) then "col IS NULL" (ordered by id), each a SEARCH of the same index. The cursor
 * knows which range it is in (its sort value is null in the second).
 */

export { EXPANDS, ORDERINGS };

type OrderField = (typeof ORDERINGS)[number];
const NULLABLE: ReadonlySet<OrderField> = new Set(["complete_after", "complete_before", "position"]);

export type TaskListPlan = {
  where: string[];
  params: unknown[];
  sort: OrderField;
  desc: boolean;
  expand: Set<string>;
};

const boolParam = (errors: FieldErrors, field: string, value: string): boolean | undefined => {
  const v = value.trim().toLowerCase();
  if (["true", "1", "yes"].includes(v)) return true;
  if (["false", "0", "no"].includes(v)) return false;
  addError(errors, field, "Must be true or false.");
  return undefined;
};

function listParam<T extends string>(
  errors: FieldErrors,
  field: string,
  value: string,
  choices: readonly T[],
): T[] {
  const items = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = items.filter((s) => !choices.includes(s as T));
  if (bad.length || items.length === 0) {
    addError(
      errors,
      field,
      `Select a valid choice. ${bad.join(", ") || '""'} is not one of the available choices.`,
    );
  }
  return items as T[];
}

function idParam(errors: FieldErrors, field: string, value: string, collection: Collection): string {
  const id = parseHyperlink(value, collection);
  if (!id) addError(errors, field, "Invalid hyperlink - No URL match.");
  return id ?? "";
}

/**
 * A calendar day's [start, end) in milliseconds, read in `zone` (UTC when null), or null when it
 * is not a day of the API's (`isDay`; 2099-12-31 ends in 2100, which no input names).
 */
export function dayBounds(text: string, zone: string | null): { start: number; end: number } | null {
  if (!isDay(text.trim())) return null;
  const [y, m, d] = text.trim().split("-").map(Number);
  return {
    start: wallToInstant(Date.UTC(y, m - 1, d), zone),
    end: wallToInstant(Date.UTC(y, m - 1, d + 1), zone),
  };
}

/** Turns the validated query into SQL conditions (or a 400 naming each bad parameter). */
export function planTaskList(
  q: TaskListQueryInput,
  ctx: { principal: Principal; zone: string | null; settleSeconds: number; now?: number },
): TaskListPlan {
  const errors: FieldErrors = {};
  const where = ["account_id = ?"];
  const params: unknown[] = [ctx.principal.accountId];
  const cond = (sql: string, ...values: unknown[]) => {
    where.push(sql);
    params.push(...values);
  };
  const time = (field: string, value: string | undefined, sql: string) => {
    if (value === undefined) return;
    const ms = parseTimestamp(value, ctx.zone);
    if (ms === null) addError(errors, field, "Enter a valid date/time.");
    else cond(sql, ms);
  };
  const inList = (column: string, values: string[]) =>
    values.length === 1
      ? cond(`${column} = ?`, values[0])
      : cond(`${column} IN (${values.map(() => "?").join(", ")})`, ...values);

  // A worker sees only the tasks assigned to it (contract §2); others' tasks do not exist for it.
  if (!isDispatcher(ctx.principal)) cond("assignee_id = ?", ctx.principal.userId);

  if (q.state !== undefined) inList("state", listParam(errors, "state", q.state, TASK_STATES));
  if (q.category !== undefined)
    inList("category", listParam(errors, "category", q.category, TASK_CATEGORIES));
  if (q.assignee !== undefined) cond("assignee_id = ?", idParam(errors, "assignee", q.assignee, "users"));
  if (q.order !== undefined) cond("order_id = ?", idParam(errors, "order", q.order, "orders"));
  if (q.client !== undefined) cond("client_id = ?", idParam(errors, "client", q.client, "clients"));
  if (q.route !== undefined) cond("route_id = ?", idParam(errors, "route", q.route, "routes"));
  if (q.contact_address !== undefined) {
    cond(
      "contact_address_id = ?",
      idParam(errors, "contact_address", q.contact_address, "contact_addresses"),
    );
  }
  if (q.contact_address__external_id !== undefined) {
    cond("contact_address_external_id = ?", q.contact_address__external_id);
  }
  if (q.task_import !== undefined)
    cond("task_import_id = ?", idParam(errors, "task_import", q.task_import, "imports"));
  time("complete_after__gte", q.complete_after__gte, "complete_after >= ?");
  time("complete_before__lte", q.complete_before__lte, "complete_before <= ?");
  if (q.day !== undefined) {
    const day = dayBounds(q.day, ctx.zone);
    if (!day) addError(errors, "day", "Enter a valid date (YYYY-MM-DD).");
    // A window missing one end is the point it names. No index serves this OR; the
    // account_id prefix still bounds the scan to the account's tasks.
    else
      cond(
        "((COALESCE(complete_after, complete_before) < ? AND COALESCE(complete_before, complete_after) >= ?) OR (scheduled_time >= ? AND scheduled_time < ?))",
        day.end,
        day.start,
        day.start,
        day.end,
      );
  }
  if (q.undated !== undefined) {
    const b = boolParam(errors, "undated", q.undated);
    if (b !== undefined) {
      where.push(
        b
          ? "(complete_after IS NULL AND complete_before IS NULL AND scheduled_time IS NULL)"
          : "(complete_after IS NOT NULL OR complete_before IS NOT NULL OR scheduled_time IS NOT NULL)",
      );
    }
  }
  for (const [col, prefix] of [
    ["geocoded_at", "address__geocoded_at"],
    ["geocode_failed_at", "address__geocode_failed_at"],
  ] as const) {
    time(prefix, q[prefix], `${col} = ?`);
    time(`${prefix}__gte`, q[`${prefix}__gte`], `${col} >= ?`);
    time(`${prefix}__lte`, q[`${prefix}__lte`], `${col} <= ?`);
    const isNull = q[`${prefix}__isnull`];
    if (isNull !== undefined) {
      const b = boolParam(errors, `${prefix}__isnull`, isNull);
      if (b !== undefined) where.push(`${col} IS ${b ? "" : "NOT "}NULL`);
    }
  }
  // Both spellings (`metafields__<key>`, `metafields[<key>]`) and the object form of a JSON
  // body (an export's `filters.metafields`).
  const metafieldFilters: [string, unknown][] = Object.entries(q).flatMap(([param, value]) => {
    const key = metafieldFilterKey(param);
    return key === null ? [] : [[key, value] as [string, unknown]];
  });
  if (q.metafields && typeof q.metafields === "object")
    metafieldFilters.push(...Object.entries(q.metafields));
  for (const [key, value] of metafieldFilters) {
    if (typeof value !== "string") continue;
    // Served by the task_metafield_values index (kept by triggers): an index SEARCH on
    // (account, key, value) whatever the account's size. A number matches however it is
    // written ("3" and "3.0"); a list value matches when one of its items does.
    const values = [value];
    const n = Number(value);
    if (value.trim() !== "" && Number.isFinite(n) && String(n) !== value) values.push(String(n));
    cond(
      `id IN (SELECT task_id FROM task_metafield_values WHERE account_id = ? AND key = ? AND value IN (${values.map(() => "?").join(", ")}))`,
      ctx.principal.accountId,
      key,
      ...values,
    );
  }
  time("updated_at__gt", q.updated_at__gt, "updated_at > ?");
  time("updated_at__gte", q.updated_at__gte, "updated_at >= ?");
  if (q.updated_at_delay_latest !== undefined) {
    const b = boolParam(errors, "updated_at_delay_latest", q.updated_at_delay_latest);
    if (b) cond("updated_at <= ?", (ctx.now ?? Date.now()) - ctx.settleSeconds * 1000);
  }

  let sort: OrderField = "created_at";
  let desc = false;
  if (q.ordering !== undefined) {
    const o = q.ordering.trim();
    const field = o.replace(/^-/, "") as OrderField;
    if (!ORDERINGS.includes(field)) {
      addError(
        errors,
        "ordering",
        `Select a valid choice. Choices: ${ORDERINGS.flatMap((f) => [f, `-${f}`]).join(", ")}.`,
      );
    } else {
      sort = field;
      desc = o.startsWith("-");
    }
  }
  const expand = new Set<string>();
  if (q.expand !== undefined) for (const e of listParam(errors, "expand", q.expand, EXPANDS)) expand.add(e);

  if (Object.keys(errors).length) throw new ValidationError(errors);
  return { where, params, sort, desc, expand };
}

// ---------------------------------------------------------------------------------------------
// Keyset pages over one or two index ranges.

type Cursor = { v: number | null; id: string; back: boolean };

function encodeCursor(c: Cursor): string {
  return base64url(new TextEncoder().encode(JSON.stringify([c.v, c.id, c.back ? 1 : 0])));
}

function decodeCursor(s: string): Cursor {
  try {
    const [v, id, back] = JSON.parse(new TextDecoder().decode(fromBase64url(s)));
    if (typeof id !== "string" || !isUuid(id) || !(v === null || typeof v === "number")) throw 0;
    return { v, id, back: back === 1 };
  } catch {
    throw new ValidationError({ cursor: ["Invalid cursor."] });
  }
}

type Segment = "values" | "nulls";
type Statement = { sql: string; params: unknown[] };

/**
 * The statements one page may run, in order: the range the cursor is in (continuing after it),
 * then the next range from its start. Exported for the query-plan test.
 */
export function pageStatements(plan: TaskListPlan, cursor: Cursor | null, limit: number): Statement[] {
  const col = plan.sort;
  const nullable = NULLABLE.has(col);
  const back = cursor?.back ?? false;
  // Walking backwards flips every comparison and sort; rows are flipped back afterwards.
  const desc = plan.desc !== back;
  const op = desc ? "<" : ">";
  const dir = desc ? "DESC" : "ASC";
  const forward: Segment[] = nullable ? ["values", "nulls"] : ["values"];
  const order = back ? [...forward].reverse() : forward;
  const start = cursor ? order.indexOf(cursor.v === null && nullable ? "nulls" : "values") : 0;
  const out: Statement[] = [];
  for (let i = Math.max(start, 0); i < order.length; i++) {
    const seg = order[i];
    const where = [...plan.where];
    const params = [...plan.params];
    const continuing = cursor && i === start;
    if (seg === "values") {
      if (nullable) where.push(`${col} IS NOT NULL`);
      if (continuing) {
        where.push(`(${col}, id) ${op} (?, ?)`);
        params.push(cursor.v, cursor.id);
      }
      out.push({
        sql: `SELECT * FROM tasks WHERE ${where.join(" AND ")} ORDER BY ${col} ${dir}, id ${dir} LIMIT ?`,
        params: [...params, limit],
      });
    } else {
      where.push(`${col} IS NULL`);
      if (continuing) {
        where.push(`id ${op} ?`);
        params.push(cursor.id);
      }
      out.push({
        sql: `SELECT * FROM tasks WHERE ${where.join(" AND ")} ORDER BY id ${dir} LIMIT ?`,
        params: [...params, limit],
      });
    }
  }
  return out;
}

/**
 * Reads that ride with a page's first statement, in its batch (one round trip): given that
 * statement's SQL and parameters, so they can read what concerns its rows (the ETAs' inputs,
 * services/eta). Their results, and the ids of the rows they concern, come back with the page.
 */
export type Beside = (page: { sql: string; params: unknown[] }) => D1PreparedStatement[];

export async function runTaskPage(
  db: D1Database,
  plan: TaskListPlan,
  opts: { cursor?: string; pageSize?: number; url: string; beside?: Beside },
): Promise<Page<TaskRow> & { beside?: { results: D1Result[]; rows: Set<string> } }> {
  const size = opts.pageSize ?? DEFAULT_PAGE_SIZE;
  const cur = opts.cursor ? decodeCursor(opts.cursor) : null;
  const rows: TaskRow[] = [];
  let beside: { results: D1Result[]; rows: Set<string> } | undefined;
  for (const st of pageStatements(plan, cur, size + 1)) {
    const want = size + 1 - rows.length;
    if (want <= 0) break;
    st.params[st.params.length - 1] = want;
    const statement = db.prepare(st.sql).bind(...st.params);
    if (opts.beside && !beside) {
      const [page, ...more] = await db.batch([statement, ...opts.beside(st)]);
      const results = page.results as TaskRow[];
      beside = { results: more, rows: new Set(results.map((r) => r.id)) };
      rows.push(...results);
      continue;
    }
    const { results } = await statement.all<TaskRow>();
    rows.push(...results);
  }
  const more = rows.length > size;
  const page = more ? rows.slice(0, size) : rows;
  const back = cur?.back ?? false;
  if (back) page.reverse();
  const link = (c: Cursor) => {
    const u = new URL(opts.url);
    u.searchParams.set("cursor", encodeCursor(c));
    return u.toString();
  };
  const at = (row: TaskRow, b: boolean): Cursor => ({
    v: row[plan.sort] as number | null,
    id: row.id,
    back: b,
  });
  const first = page[0];
  const last = page[page.length - 1];
  let next: string | null = null;
  let previous: string | null = null;
  if (back) {
    if (last) next = link(at(last, false));
    else if (cur) next = link({ ...cur, back: false });
    if (more && first) previous = link(at(first, true));
  } else {
    if (more && last) next = link(at(last, false));
    if (cur && first) previous = link(at(first, true));
    else if (cur) previous = link({ ...cur, back: true });
  }
  return { results: page, next, previous, beside };
}
