import { useSignal } from "@preact/signals";
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";
import type { TaskAction } from "../../src/domain/task-state-machine";
import type { Task } from "../shared/api";
import { timeOfDay, timeRange, todayIn } from "../shared/format";
import { LanguagePicker } from "../shared/language-picker";
import { SignInForm } from "../shared/sign-in";
import { readForms, TaskForms } from "./forms";
import { type FieldKey, tf } from "./locales";
import type { Upload } from "./outbox";
import { type Pad, padImage, SignaturePad } from "./signature";
import {
  act,
  allowed,
  BUTTONS,
  dismiss,
  documents,
  dutyError,
  firstLine,
  notice,
  notYours,
  onDuty,
  online,
  openTaskId,
  orderNotice,
  refusedOf,
  requiredMetafields,
  type Session,
  session,
  setOnDuty,
  setSharePosition,
  sharePosition,
  signIn,
  signInReason,
  signOut,
  started,
  statusText,
  taskForms,
  tasks,
} from "./state";

export function App() {
  if (!started.value) return <p class="loading">{tf("loading")}</p>;
  if (notYours.value) return <NotYours role={notYours.value} />;
  const s = session.value;
  if (!s) return <SignIn />;
  const task = openTaskId.value ? tasks.value.find((t) => t.id === openTaskId.value) : null;
  return (
    <>
      <Header />
      {task ? <TaskView task={task} session={s} /> : <Today session={s} />}
    </>
  );
}

function Header() {
  const error = useSignal("");
  return (
    <header class="top">
      <p role="status" class={`sync ${online.value ? "" : "offline"}`}>
        {statusText.value}
        {online.value ? "" : ` · ${tf("status.offline")}`}
      </p>
      <button
        type="button"
        class="signout"
        onClick={async () => {
          error.value = (await signOut()) ?? "";
        }}
      >
        {tf("signout")}
      </button>
      {error.value && (
        <p class="error" role="alert">
          {error.value}
        </p>
      )}
    </header>
  );
}

function NotYours({ role }: { role: string }) {
  return (
    <main class="signin">
      <h1>{tf("title")}</h1>
      <p>{tf("notYours.body", { role })}</p>
    </main>
  );
}

function SignIn() {
  return (
    <SignInForm
      words={{
        title: tf("title"),
        heading: tf("signin.heading"),
        email: tf("signin.email"),
        password: tf("signin.password"),
        submit: tf("signin.submit"),
        language: tf("language"),
      }}
      reason={signInReason.value}
      signIn={signIn}
    />
  );
}

const stateLabel = (state: string) => tf(`state.${state}` as FieldKey);

/** The task whose page was left last: its link takes the focus back on the list (WCAG 2.4.3). */
let returnTo: string | null = null;

function Today({ session: s }: { session: Session }) {
  const list = tasks.value;
  // Today's date in the account's zone: an ETA on another day is shown with its date.
  const today = todayIn(s.account.timezone);
  useEffect(() => {
    if (returnTo) document.querySelector<HTMLElement>(`a[href="#task/${returnTo}"]`)?.focus();
    returnTo = null;
  }, []);
  return (
    <main>
      <h1 id="today-heading">{tf("today")}</h1>
      <p class="duty">
        <button
          type="button"
          role="switch"
          aria-checked={onDuty.value}
          class={`switch${onDuty.value ? " on" : ""}`}
          onClick={() => void setOnDuty(!onDuty.value)}
        >
          {tf("duty")}
        </button>
        {dutyError.value && (
          <span class="error" role="alert">
            {" "}
            {dutyError.value}
          </span>
        )}
      </p>
      {notice.value && (
        <p class="info" role="status">
          {notice.value}
        </p>
      )}
      {orderNotice.value && (
        <p class="info" role="status">
          {orderNotice.value}
        </p>
      )}
      {list.length === 0 ? (
        <p>{tf("today.empty")}</p>
      ) : (
        <ul class="today" aria-labelledby="today-heading">
          {list.map((task) => {
            const window = timeRange(
              task.complete_after ?? null,
              task.complete_before ?? null,
              s.account.timezone,
            );
            const refused = refusedOf(task.url as string).length > 0;
            return (
              <li key={task.id} aria-label={firstLine(task)} class={`item ${task.state}`}>
                <a href={`#task/${task.id}`}>
                  <strong>{firstLine(task)}</strong>
                  <span class="meta">
                    <span class={`badge ${task.state}`}>{stateLabel(task.state as string)}</span>{" "}
                    {window ?? tf("window.none")}
                    {task.eta && (
                      <span class="eta">
                        {" "}
                        · {tf("eta")} {timeOfDay(task.eta, s.account.timezone, today)}
                      </span>
                    )}
                  </span>
                  {refused && (
                    <span class="refused">
                      {tf("refused", { reason: refusedOf(task.url as string)[0].error ?? "" })}
                    </span>
                  )}
                </a>
              </li>
            );
          })}
        </ul>
      )}
      <label class="position">
        <input
          type="checkbox"
          checked={sharePosition.value}
          onChange={(e) => void setSharePosition(e.currentTarget.checked)}
        />{" "}
        {tf("position")}
      </label>
      <LanguagePicker label={tf("language")} />
    </main>
  );
}

/** A link that opens the phone's maps app at the task (RFC 5870 `geo:` URI). */
function mapsLink(task: Task) {
  const c = task.address?.location?.coordinates;
  const label = task.address?.formatted_address || task.address?.raw_address || "";
  if (c && c.length === 2) return `geo:${c[1]},${c[0]}?q=${c[1]},${c[0]}(${encodeURIComponent(label)})`;
  return `geo:0,0?q=${encodeURIComponent(label)}`;
}

function TaskView({ task, session: s }: { task: Task; session: Session }) {
  const dialog = useSignal<"fail" | "complete" | null>(null);
  const docs = documents.value[task.id as string] ?? [];
  const contact = task.contact;
  const window = timeRange(task.complete_after ?? null, task.complete_before ?? null, s.account.timezone);
  const heading = useRef<HTMLHeadingElement>(null);
  // A new page for a screen reader: the focus moves to its heading (WCAG 2.4.3).
  useEffect(() => {
    heading.current?.focus();
    returnTo = task.id as string;
  }, [task.id]);
  const run = (action: TaskAction) => {
    if (action === "fail") dialog.value = "fail";
    else if (action === "complete") dialog.value = "complete";
    else
      void act(task, action).then(() => {
        // The pressed button is gone with the state it belonged to: the focus goes to the next
        // step's button, so a keyboard or screen reader user goes on from where they were.
        const next = document.querySelector<HTMLElement>(".actions button") ?? heading.current;
        next?.focus();
      });
  };
  return (
    <main class="task">
      <button type="button" class="back" onClick={() => (location.hash = "")}>
        {tf("back")}
      </button>
      <h1 ref={heading} tabIndex={-1}>
        {firstLine(task)}
      </h1>
      <p>
        <span class={`badge ${task.state}`}>{stateLabel(task.state as string)}</span>
      </p>
      {refusedOf(task.url as string).map((a) => (
        <p key={a.externalId} class="refused" role="alert">
          {tf("refused", { reason: a.error ?? "" })}{" "}
          <button type="button" onClick={() => void dismiss(a)}>
            {tf("dismiss")}
          </button>
        </p>
      ))}
      <div class="actions">
        {BUTTONS.filter((b) => allowed(task, b.action)).map((b) => (
          <button key={b.action} type="button" class={`act ${b.action}`} onClick={() => run(b.action)}>
            {tf(b.label)}
          </button>
        ))}
      </div>
      <dl>
        <dt>{tf("address")}</dt>
        <dd>
          {task.address?.formatted_address || task.address?.raw_address}
          <br />
          <a href={mapsLink(task)}>{tf("address.maps")}</a>
        </dd>
        <dt>{tf("contact")}</dt>
        <dd>
          {contact?.name}
          {contact?.company ? ` (${contact.company})` : ""}
          {(contact?.phones ?? []).map((p) => (
            <span key={p}>
              <br />
              <a href={`tel:${p}`}>{p}</a>
            </span>
          ))}
        </dd>
        <dt>{tf("window")}</dt>
        <dd>{window ?? tf("window.none")}</dd>
        {task.description && (
          <>
            <dt>{tf("description")}</dt>
            <dd class="description">{task.description}</dd>
          </>
        )}
        <dt>{tf("documents")}</dt>
        <dd>
          {docs.length === 0 ? (
            tf("documents.none")
          ) : (
            <ul>
              {docs.map((d) => (
                <li key={d.id}>
                  <a href={d.file} target="_blank" rel="noreferrer">
                    {d.description || d.file_name}
                  </a>
                </li>
              ))}
            </ul>
          )}
        </dd>
      </dl>
      {dialog.value === "fail" && (
        <FailDialog task={task} session={s} onClose={() => (dialog.value = null)} />
      )}
      {dialog.value === "complete" && (
        <CompleteDialog task={task} session={s} onClose={() => (dialog.value = null)} />
      )}
    </main>
  );
}

/** A modal `<dialog>` named by its heading; Escape or "Cancel" closes it. */
function Dialog(props: { title: string; id: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    const close = () => props.onClose();
    d?.addEventListener("close", close);
    return () => d?.removeEventListener("close", close);
  }, []);
  return (
    <dialog ref={ref} aria-labelledby={props.id}>
      <h2 id={props.id}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

function FailDialog({ task, session: s, onClose }: { task: Task; session: Session; onClose: () => void }) {
  const reasons = s.account.failed_reasons;
  return (
    <Dialog title={tf("fail.heading")} id="fail-heading" onClose={onClose}>
      <form
        method="dialog"
        onSubmit={async (e) => {
          e.preventDefault();
          const notes = String(new FormData(e.currentTarget).get("notes") ?? "");
          await act(task, "fail", { notes });
          onClose();
        }}
      >
        <label htmlFor="fail-reason">{tf("fail.reason")}</label>
        {reasons.length ? (
          <select id="fail-reason" name="notes" required>
            {reasons.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        ) : (
          <input id="fail-reason" name="notes" type="text" />
        )}
        <div class="buttons">
          <button type="submit">{tf("fail.submit")}</button>
          <button type="button" onClick={onClose}>
            {tf("cancel")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** The input a metafield's value type is typed in (contract §12). */
const inputType = (valueType: string) =>
  valueType === "number" || valueType === "integer" ? "number" : valueType === "date" ? "date" : "text";

function CompleteDialog({
  task,
  session: s,
  onClose,
}: {
  task: Task;
  session: Session;
  onClose: () => void;
}) {
  const pad = useRef<Pad>({ canvas: null, drawn: false });
  const pads = useRef<Record<string, Pad>>({});
  const error = useSignal("");
  const forms = taskForms.value[task.id as string] ?? [];
  const set = (task.metafields ?? {}) as Record<string, unknown>;
  const missing = requiredMetafields.value.filter(
    (m) => set[m.key] === undefined || set[m.key] === null || set[m.key] === "",
  );
  const signers = ((task.signers ?? []) as { name: string }[]).map((x) => x.name);
  return (
    <Dialog title={tf("complete.heading")} id="complete-heading" onClose={onClose}>
      <form
        method="dialog"
        onSubmit={async (e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          const filled = await readForms(forms, f, pads.current, s.account.timezone);
          // Fields the browser cannot check itself (a signature, a set of choices).
          if (filled.missing.length) {
            error.value = tf("form.missing", { fields: filled.missing.join(", ") });
            return;
          }
          const uploads: Upload[] = [];
          const blob = await padImage(pad.current);
          if (blob)
            uploads.push({
              kind: "signature",
              blob,
              fileName: "signature.png",
              type: "image/png",
              signerName: String(f.get("signer") ?? "") || undefined,
            });
          const photo = f.get("photo");
          if (photo instanceof File && photo.size > 0)
            uploads.push({
              kind: "photo",
              blob: photo,
              fileName: photo.name || "photo.jpg",
              type: photo.type || "image/jpeg",
            });
          const metafields: Record<string, unknown> = {};
          for (const m of missing) {
            const raw = f.get(`mf-${m.key}`);
            if (m.value_type === "boolean") metafields[m.key] = raw === "on";
            else if (m.value_type === "number" || m.value_type === "integer") metafields[m.key] = Number(raw);
            else metafields[m.key] = String(raw ?? "");
          }
          // The metafields first (an `update`), so the `complete` after it finds them set.
          if (missing.length) await act(task, "update", { taskData: { metafields } });
          await act(task, "complete", {
            uploads: [...uploads, ...filled.uploads],
            forms: filled.fills,
          });
          onClose();
        }}
      >
        {error.value && (
          <p class="error" role="alert">
            {error.value}
          </p>
        )}
        {missing.length > 0 && (
          <fieldset>
            <legend>{tf("complete.required")}</legend>
            {missing.map((m) => (
              <div key={m.key} class="field">
                <label htmlFor={`mf-${m.key}`}>{m.label}</label>
                {m.value_type === "boolean" ? (
                  <input id={`mf-${m.key}`} name={`mf-${m.key}`} type="checkbox" />
                ) : m.choices?.length ? (
                  <select id={`mf-${m.key}`} name={`mf-${m.key}`} required>
                    {m.choices.map((c) => (
                      <option key={c} value={c}>
                        {c}
                      </option>
                    ))}
                  </select>
                ) : (
                  <input
                    id={`mf-${m.key}`}
                    name={`mf-${m.key}`}
                    required
                    type={inputType(m.value_type) as "text"}
                  />
                )}
              </div>
            ))}
          </fieldset>
        )}
        <TaskForms forms={forms} zone={s.account.timezone} pads={pads} />
        <SignaturePad pad={pad} label={tf("signature")} clearLabel={tf("clear")} />
        {s.account.feature_signer_name && (
          <label>
            {tf("signer")}
            <input name="signer" type="text" list="signers" required />
            <datalist id="signers">
              {signers.map((n) => (
                <option key={n} value={n} />
              ))}
            </datalist>
          </label>
        )}
        <label>
          {tf("photo")}
          <input name="photo" type="file" accept="image/*" capture="environment" />
        </label>
        <div class="buttons">
          <button type="submit">{tf("complete.submit")}</button>
          <button type="button" onClick={onClose}>
            {tf("cancel")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
