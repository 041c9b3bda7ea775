import { useSignal } from "@preact/signals";
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";
import type { Task } from "../shared/api";
import { type MessageKey, t } from "../shared/i18n";
import { firstLine } from "./board-view";
import { board, date, moveTask, notice, selected, session, tasks, workerName, workers } from "./state";

/** A modal dialog (the platform's: focus kept inside, Escape closes, focus returns). */
export function Dialog(props: {
  id: string;
  title: string;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const back = document.activeElement as HTMLElement | null;
    ref.current?.showModal();
    return () => back?.focus();
  }, []);
  return (
    <dialog ref={ref} aria-labelledby={`${props.id}-title`} onClose={props.onClose} class="dialog">
      <h2 id={`${props.id}-title`}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

export function AssignDialog({ onClose }: { onClose: () => void }) {
  const task = selected.value ? tasks.value.get(selected.value) : undefined;
  const current = task?.assignee ?? workers.value[0]?.url ?? "";
  const worker = useSignal(current);
  const lengthOf = (w: string) => (board.value.get(w) ?? []).filter((x) => x.id !== task?.id).length;
  const position = useSignal(String(lengthOf(current) + 1));
  if (!task) return null;
  return (
    <Dialog id="assign" title={t("assign.heading")} onClose={onClose}>
      <p>{firstLine(task)}</p>
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          const p = Math.max(1, Number(position.value) || 1);
          moveTask(task.id, worker.value, p - 1);
          onClose();
        }}
      >
        <label>
          {t("assign.worker")}
          <select
            value={worker.value}
            onChange={(e) => {
              worker.value = e.currentTarget.value;
              position.value = String(lengthOf(worker.value) + 1);
            }}
          >
            {workers.value.map((w) => (
              <option key={w.url} value={w.url}>
                {w.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t("assign.position")}
          <input
            type="number"
            min={1}
            max={lengthOf(worker.value) + 1}
            value={position.value}
            onInput={(e) => (position.value = e.currentTarget.value)}
          />
        </label>
        <div class="buttons">
          <button type="submit">{t("assign")}</button>
          <button type="button" onClick={onClose}>
            {t("cancel")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

type FieldErrors = Record<string, string[] | Record<string, string[]>>;

/** The API's errors of one field (contract §3), nested ones flattened. */
function errorsAt(errors: FieldErrors, field: string): string[] {
  const e = errors[field];
  if (!e) return [];
  if (Array.isArray(e)) return e;
  return Object.values(e).flat() as string[];
}

function Field(props: {
  name: string;
  label: string;
  errors: FieldErrors;
  children: (a: object) => ComponentChildren;
}) {
  const errs = errorsAt(props.errors, props.name);
  const id = `f-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.children({
        id,
        name: props.name,
        "aria-invalid": errs.length ? "true" : undefined,
        "aria-describedby": errs.length ? `${id}-err` : undefined,
      })}
      {errs.length > 0 && (
        <p id={`${id}-err`} class="error">
          {errs.join(" ")}
        </p>
      )}
    </div>
  );
}

type MetafieldDef = { key: string; label: string; value_type: string; choices: string[] };

/** The account's task metafields required before completion: asked when a task is made or edited. */
async function requiredMetafields(): Promise<MetafieldDef[]> {
  const r = await session.value!.client.GET("/metafields/", {
    params: { query: { applies_to: "tasks", page_size: 500 } },
  });
  return (r.data?.results ?? []).filter((m) => m.is_required_before_complete) as MetafieldDef[];
}

/** A metafield's value from its input, typed as the API takes it (empty: not sent). */
function metafieldValue(def: MetafieldDef, raw: string): unknown {
  if (raw === "") return undefined;
  if (def.value_type === "number") return Number(raw);
  if (def.value_type === "integer") return Number.parseInt(raw, 10);
  if (def.value_type === "boolean") return raw === "true";
  return raw;
}

const inputType = (valueType: string) =>
  valueType === "number" || valueType === "integer" ? "number" : valueType === "date" ? "date" : "text";

/** `2030-06-01T09:00:00+03:00` as rendered in the account's zone → `2030-06-01T09:00`. */
const localInput = (ts: string | null | undefined) => (ts ? ts.slice(0, 16) : "");

/**
 * "New task", or "Edit task" for `task` (contract §26): address (geocoded by the API), contact,
 * window, category and the account's required metafields; the API's field errors at their fields.
 */
export function TaskDialog({ onClose, task }: { onClose: () => void; task?: Task }) {
  const errors = useSignal<FieldErrors>({});
  const busy = useSignal(false);
  const defs = useSignal<MetafieldDef[]>([]);
  const s = session.value!;
  const day = date.value;
  useEffect(() => {
    requiredMetafields().then((d) => (defs.value = d));
  }, []);
  const editing = !!task;
  const mf = (task?.metafields ?? {}) as Record<string, unknown>;
  const mfErrors = (errors.value.metafields ?? {}) as FieldErrors;
  return (
    <Dialog
      id={editing ? "edit-task" : "new-task"}
      title={editing ? t("editTask.heading") : t("newTask.heading")}
      onClose={onClose}
    >
      <form
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          const v = (k: string) => String(f.get(k) ?? "").trim();
          // datetime-local values have no offset: the API reads them in Accept-Timezone's zone,
          // the account's (contract §1).
          const time = (k: string) => (v(k) ? `${v(k)}:00` : null);
          const metafields: Record<string, unknown> = {};
          for (const d of defs.value) {
            const value = metafieldValue(d, v(`mf-${d.key}`));
            if (value !== undefined) metafields[d.key] = value;
          }
          const body = {
            category: v("category") as "drop_off",
            address: { raw_address: v("address") },
            contact: { name: v("contact"), phones: v("phone") ? [v("phone")] : [] },
            complete_after: time("complete_after"),
            complete_before: time("complete_before"),
            ...(Object.keys(metafields).length ? { metafields } : {}),
          };
          busy.value = true;
          const r = task
            ? await s.client.PATCH("/tasks/{id}/", { params: { path: { id: task.id } }, body: body as never })
            : await s.client.POST("/tasks/", { body: { account: s.account, ...body } as never });
          busy.value = false;
          if (r.data) {
            const saved = r.data as Task;
            tasks.value = new Map(tasks.value).set(saved.id, saved);
            notice.value = { text: editing ? t("editTask.saved") : t("newTask.created"), error: false };
            onClose();
          } else {
            const err = (r.error ?? {}) as FieldErrors;
            errors.value = err;
            const detail = (err as { detail?: unknown }).detail;
            const general = errorsAt(err, "non_field_errors").concat(
              typeof detail === "string" ? [detail] : [],
            );
            if (general.length) notice.value = { text: general.join(" "), error: true };
          }
        }}
      >
        <Field name="address" label={t("newTask.address")} errors={errors.value}>
          {(a) => (
            <input
              {...a}
              type="text"
              autoComplete="street-address"
              defaultValue={task?.address?.raw_address ?? ""}
            />
          )}
        </Field>
        <Field name="contact" label={t("newTask.contactName")} errors={errors.value}>
          {(a) => <input {...a} type="text" defaultValue={task?.contact?.name ?? ""} />}
        </Field>
        <Field name="phone" label={t("newTask.phone")} errors={errors.value}>
          {(a) => <input {...a} type="tel" defaultValue={task?.contact?.phones?.[0] ?? ""} />}
        </Field>
        {(
          [
            ["complete_after", "newTask.after", "09:00"],
            ["complete_before", "newTask.before", "17:00"],
          ] as const
        ).map(([name, label, time]) => (
          <Field key={name} name={name} label={t(label)} errors={errors.value}>
            {(a) => (
              <input
                {...a}
                type="datetime-local"
                defaultValue={task ? localInput(task[name]) : `${day}T${time}`}
              />
            )}
          </Field>
        ))}
        <Field name="category" label={t("newTask.category")} errors={errors.value}>
          {(a) => (
            // Preact has no `defaultValue` for a select: the task's option is `selected`.
            <select {...a}>
              {(["drop_off", "pick_up", "service"] as const).map((c) => (
                <option key={c} value={c} selected={c === (task?.category ?? "drop_off")}>
                  {t(`category.${c}` as MessageKey)}
                </option>
              ))}
            </select>
          )}
        </Field>
        {defs.value.map((d) => (
          <Field
            key={d.key}
            name={`mf-${d.key}`}
            label={d.label || d.key}
            errors={{ [`mf-${d.key}`]: mfErrors[d.key] ?? [] }}
          >
            {(a) =>
              d.value_type === "select" || d.value_type === "boolean" ? (
                <select {...a}>
                  <option value="" />
                  {(d.value_type === "boolean" ? ["true", "false"] : d.choices).map((c) => (
                    <option key={c} value={c} selected={mf[d.key] !== undefined && String(mf[d.key]) === c}>
                      {c}
                    </option>
                  ))}
                </select>
              ) : (
                <input
                  {...a}
                  type={inputType(d.value_type) as "text"}
                  defaultValue={mf[d.key] === undefined || mf[d.key] === null ? "" : String(mf[d.key])}
                />
              )
            }
          </Field>
        ))}
        <div class="buttons">
          <button type="submit" disabled={busy.value}>
            {editing ? t("editTask.save") : t("newTask.create")}
          </button>
          <button type="button" onClick={onClose}>
            {t("cancel")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

export { workerName };
