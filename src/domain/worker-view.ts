import type { FormSnapshot } from "./forms";

/**
 * What a worker may see of the objects the API renders (contract §2, §8, §15): the one place
 * that decides it, for the API's answers and for the live stream alike (domain/live.ts), so the
 * two can never disagree. Pure: the readers that need the account's hidden form fields load
 * them (services/forms/worker-view.ts) and pass them in.
 *
 * - Documents and signatures: only those of tasks assigned to the worker, and `visible_to_worker`.
 * - Form fields with `visible_to_worker: false`: neither their definitions, their values in a
 *   response (`data`, the completed response's `schema_snapshot`), nor their defaults in a task's
 *   `form_default_values`.
 */

/** Fields hidden from workers, as `hiddenFieldKey(form id, field key)`. */
export type HiddenFields = ReadonlySet<string>;

export const hiddenFieldKey = (formId: string, key: string) => `${formId}\u0000${key}`;

/** The SQL condition a worker's reads of attachments add (the same rule as `attachmentVisibleToWorker`). */
export const WORKER_ATTACHMENT_SQL = "visible_to_worker = 1";

export const attachmentVisibleToWorker = (a: { visible_to_worker?: unknown }) => Boolean(a.visible_to_worker);

type Defaults = Record<string, Record<string, unknown> | null | undefined>;

/** A task's `form_default_values` without the defaults of fields hidden from workers. */
export function formDefaultsForWorker(values: Defaults | null | undefined, hidden: HiddenFields): Defaults {
  if (!values || typeof values !== "object") return {};
  if (!hidden.size) return values;
  return Object.fromEntries(
    Object.entries(values).map(([formId, byKey]) => [
      formId,
      byKey && typeof byKey === "object"
        ? Object.fromEntries(
            Object.entries(byKey).filter(([key]) => !hidden.has(hiddenFieldKey(formId, key))),
          )
        : byKey,
    ]),
  );
}

/** A serialized task (an object with `form_default_values`) as a worker reads it. */
export function taskForWorker<T extends { form_default_values?: unknown }>(task: T, hidden: HiddenFields): T {
  if (!hidden.size || !task.form_default_values) return task;
  return {
    ...task,
    form_default_values: formDefaultsForWorker(task.form_default_values as Defaults, hidden),
  };
}

/** The keys of a completed response's snapshot that are hidden from workers. */
export const hiddenKeysOfSnapshot = (snapshot: FormSnapshot | null | undefined): Set<string> =>
  new Set(snapshot?.fields.filter((f) => !f.visible_to_worker).map((f) => f.key) ?? []);

/**
 * A serialized form response with `hidden` keys left out of its `data` and, when completed, of
 * its `schema_snapshot`.
 */
export function responseForReader<
  T extends { data: Record<string, unknown>; schema_snapshot: FormSnapshot | null },
>(response: T, hidden: ReadonlySet<string>): T {
  if (!hidden.size) return response;
  const s = response.schema_snapshot;
  return {
    ...response,
    data: Object.fromEntries(Object.entries(response.data ?? {}).filter(([k]) => !hidden.has(k))),
    schema_snapshot: s ? { form: s.form, fields: s.fields.filter((f) => f.visible_to_worker) } : s,
  };
}
