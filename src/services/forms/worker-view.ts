import { isDispatcher, type Principal } from "../auth/principal";
import type { TaskRow } from "../tasks/types";

/**
 * A worker reads tasks without the defaults of form fields hidden from workers (contract §15:
 * workers do not see `visible_to_worker: false` fields, their values nor their defaults), so a
 * task's `form_default_values` carries, for a worker, only the keys of fields it may see. One
 * query, and only when some task has defaults at all; other roles read tasks unchanged.
 */
export async function tasksForReader<T extends TaskRow>(
  db: D1Database,
  p: Principal,
  tasks: T[],
): Promise<T[]> {
  if (isDispatcher(p)) return tasks;
  const withDefaults = tasks.filter((t) => t.form_default_values && t.form_default_values !== "{}");
  if (!withDefaults.length) return tasks;
  const { results } = await db
    .prepare("SELECT form_id, key FROM form_fields WHERE account_id = ? AND visible_to_worker = 0")
    .bind(p.accountId)
    .all<{ form_id: string; key: string }>();
  if (!results.length) return tasks;
  const hidden = new Set(results.map((f) => `${f.form_id}\u0000${f.key}`));
  return tasks.map((t) => {
    if (!withDefaults.includes(t)) return t;
    let values: Record<string, Record<string, unknown>>;
    try {
      values = JSON.parse(t.form_default_values ?? "{}");
    } catch {
      return t;
    }
    const visible = Object.fromEntries(
      Object.entries(values ?? {}).map(([formId, byKey]) => [
        formId,
        Object.fromEntries(
          Object.entries(byKey ?? {}).filter(([key]) => !hidden.has(`${formId}\u0000${key}`)),
        ),
      ]),
    );
    return { ...t, form_default_values: JSON.stringify(visible) };
  });
}
