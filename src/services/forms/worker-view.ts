import { type HiddenFields, hiddenFieldKey, taskForWorker } from "../../domain/worker-view";
import { isDispatcher, type Principal } from "../auth/principal";
import { parseJson, type TaskRow } from "../tasks/types";

/** The account's form fields hidden from workers (domain/worker-view.ts), one query. */
export async function hiddenFormFields(db: D1Database, accountId: string): Promise<HiddenFields> {
  const { results } = await db
    .prepare("SELECT form_id, key FROM form_fields WHERE account_id = ? AND visible_to_worker = 0")
    .bind(accountId)
    .all<{ form_id: string; key: string }>();
  return new Set(results.map((f) => hiddenFieldKey(f.form_id, f.key)));
}

/**
 * A worker reads tasks without the defaults of form fields hidden from workers (contract §15:
 * workers do not see `visible_to_worker: false` fields, their values nor their defaults), so a
 * task's `form_default_values` carries, for a worker, only the keys of fields it may see. One
 * query, and only when some task has defaults at all; other roles read tasks unchanged. The rule
 * itself is domain/worker-view.ts's, which the live stream applies too.
 */
export async function tasksForReader<T extends TaskRow>(
  db: D1Database,
  p: Principal,
  tasks: T[],
): Promise<T[]> {
  if (isDispatcher(p)) return tasks;
  const withDefaults = tasks.filter((t) => t.form_default_values && t.form_default_values !== "{}");
  if (!withDefaults.length) return tasks;
  const hidden = await hiddenFormFields(db, p.accountId);
  if (!hidden.size) return tasks;
  return tasks.map((t) => {
    if (!withDefaults.includes(t)) return t;
    const values = parseJson<Record<string, Record<string, unknown>> | null>(t.form_default_values, null);
    if (!values) return t;
    const seen = taskForWorker({ form_default_values: values }, hidden);
    return { ...t, form_default_values: JSON.stringify(seen.form_default_values) };
  });
}
