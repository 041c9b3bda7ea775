import { useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import type { Task } from "../shared/api";
import { timeRange } from "../shared/format";
import { type MessageKey, t } from "../shared/i18n";
import { LanguagePicker } from "./app";
import { UNASSIGNED } from "./board";
import { AssignDialog, NewTaskDialog, OptimizeDialog } from "./dialogs";
import { MapRegion } from "./map-region";
import {
  board,
  date,
  loadDay,
  loading,
  moveTask,
  notice,
  search,
  selected,
  session,
  signOut,
  stateFilter,
  streamStatus,
  tasks,
  timings,
  workerName,
} from "./state";

export const STATES = [
  "draft",
  "scheduled",
  "unassigned",
  "assigned",
  "accepted",
  "transit",
  "active",
  "completed",
  "failed",
  "cancelled",
] as const;
export const stateLabel = (s: string) => t(`s.${s}` as MessageKey);

/** An item's name (contract §26): its address's first line. */
export const firstLine = (task: Task) =>
  (task.address?.formatted_address || task.address?.raw_address || "").split(/\n|,/)[0].trim() || "—";

type DialogName = "assign" | "new" | "optimize" | null;

export function Board() {
  const dialog = useSignal<DialogName>(null);
  const s = session.value!;
  useEffect(() => {
    if (!loading.value && timings.dataAt && !timings.renderedAt) {
      // After the browser has painted the board: the bench's "usable" moment.
      requestAnimationFrame(() => setTimeout(() => (timings.renderedAt = performance.now())));
    }
  });
  const openAssign = () => {
    if (selected.value) dialog.value = "assign";
    else notice.value = { text: t("assign.none"), error: true };
  };
  const unassign = () => {
    const id = selected.value;
    if (id) moveTask(id, UNASSIGNED, 0);
    else notice.value = { text: t("assign.none"), error: true };
  };
  const lanes = board.value;
  return (
    <div class="console">
      <header>
        <h1>{t("app.title")}</h1>
        <div class="toolbar">
          <label>
            {t("date")}{" "}
            <input
              type="date"
              value={date.value}
              onChange={(e) => {
                date.value = e.currentTarget.value;
                loadDay();
              }}
            />
          </label>
          <label>
            {t("search")}{" "}
            <input
              type="search"
              value={search.value}
              onInput={(e) => (search.value = e.currentTarget.value)}
            />
          </label>
          <label>
            {t("state")}{" "}
            <select value={stateFilter.value} onChange={(e) => (stateFilter.value = e.currentTarget.value)}>
              <option value="">{t("state.all")}</option>
              {STATES.map((st) => (
                <option key={st} value={st}>
                  {stateLabel(st)}
                </option>
              ))}
            </select>
          </label>
          <button type="button" onClick={openAssign}>
            {t("assign")}
          </button>
          <button type="button" onClick={unassign}>
            {t("unassign")}
          </button>
          <button type="button" onClick={() => (dialog.value = "new")}>
            {t("newTask")}
          </button>
          <button type="button" onClick={() => (dialog.value = "optimize")}>
            {t("optimize")}
          </button>
          <p role="status" class={`live ${streamStatus.value}`}>
            {streamStatus.value === "live" ? t("live") : t("reconnecting")}
          </p>
          <LanguagePicker />
          <span class="who">{s.me.name}</span>
          <button type="button" onClick={signOut}>
            {t("signout")}
          </button>
        </div>
        <p class={`notice ${notice.value?.error ? "error" : ""}`} role="status" aria-live="polite">
          {notice.value?.text ?? ""}
        </p>
      </header>
      <main class="day">
        <div class="lanes" aria-busy={loading.value}>
          {[...lanes.entries()].map(([lane, list]) => (
            <Lane
              key={lane}
              lane={lane}
              list={list}
              title={lane === UNASSIGNED ? t("unassigned") : workerName(lane)}
              onAssign={openAssign}
            />
          ))}
        </div>
        <MapRegion />
      </main>
      {dialog.value === "assign" && <AssignDialog onClose={() => (dialog.value = null)} />}
      {dialog.value === "new" && <NewTaskDialog onClose={() => (dialog.value = null)} />}
      {dialog.value === "optimize" && <OptimizeDialog onClose={() => (dialog.value = null)} />}
    </div>
  );
}

/** Moves focus to another item of the board (roving tabindex: one tab stop per list). */
function focusItem(id: string | undefined) {
  if (!id) return;
  selected.value = id;
  requestAnimationFrame(() => document.getElementById(`task-${id}`)?.focus());
}

function Lane(props: { lane: string; list: Task[]; title: string; onAssign: () => void }) {
  const { lane, list, title } = props;
  const headingId = `lane-${lane === UNASSIGNED ? UNASSIGNED : lane.replace(/\W+/g, "-")}`;
  const over = useSignal(false);
  const sel = selected.value;
  const stop = list.some((x) => x.id === sel) ? sel : list[0]?.id;
  const ul = useRef<HTMLUListElement>(null);
  const dropAt = (e: DragEvent, index: number) => {
    e.preventDefault();
    e.stopPropagation();
    over.value = false;
    const id = e.dataTransfer?.getData("text/plain");
    if (id && tasks.value.has(id)) moveTask(id, lane, index);
  };
  const lanesOrder = () => [...board.value.keys()];
  const onKey = (e: KeyboardEvent, index: number) => {
    const task = list[index];
    const key = e.key;
    if (key === "ArrowDown" || key === "ArrowUp") {
      e.preventDefault();
      focusItem(list[index + (key === "ArrowDown" ? 1 : -1)]?.id);
    } else if (key === "Home" || key === "End") {
      e.preventDefault();
      focusItem((key === "Home" ? list[0] : list[list.length - 1])?.id);
    } else if (key === "ArrowLeft" || key === "ArrowRight") {
      e.preventDefault();
      const order = lanesOrder();
      let k = order.indexOf(lane);
      for (;;) {
        k += key === "ArrowRight" ? 1 : -1;
        if (k < 0 || k >= order.length) return;
        const other = board.value.get(order[k]);
        if (other?.length) return focusItem(other[Math.min(index, other.length - 1)].id);
      }
    } else if (key === "a" || key === "Enter") {
      e.preventDefault();
      selected.value = task.id;
      props.onAssign();
    } else if (key === "u") {
      e.preventDefault();
      moveTask(task.id, UNASSIGNED, 0);
    }
  };
  return (
    <section class={`lane ${over.value ? "over" : ""}`} aria-labelledby={headingId}>
      <h2 id={headingId}>
        {title} <span class="count">{t("tasks.count", { n: list.length })}</span>
      </h2>
      <ul
        ref={ul}
        onDragOver={(e) => {
          e.preventDefault();
          over.value = true;
        }}
        onDragLeave={() => (over.value = false)}
        onDrop={(e) => dropAt(e, list.length)}
      >
        {list.map((task, i) => (
          <Item
            key={task.id}
            task={task}
            tabStop={task.id === stop}
            onKey={(e) => onKey(e, i)}
            onDrop={(e) => dropAt(e, i)}
          />
        ))}
      </ul>
    </section>
  );
}

function Item(props: {
  task: Task;
  tabStop: boolean;
  onKey: (e: KeyboardEvent) => void;
  onDrop: (e: DragEvent) => void;
}) {
  const { task } = props;
  const zone = session.value!.zone;
  const span = timeRange(task.complete_after, task.complete_before, zone) ?? t("task.noWindow");
  const contact =
    [task.contact?.name, task.contact?.phones?.[0]].filter(Boolean).join(" · ") || t("task.noContact");
  const isSel = selected.value === task.id;
  return (
    <li
      id={`task-${task.id}`}
      class={`task s-${task.state}${isSel ? " selected" : ""}`}
      tabIndex={props.tabStop ? 0 : -1}
      draggable
      aria-label={firstLine(task)}
      aria-describedby={`desc-${task.id}`}
      aria-current={isSel ? "true" : undefined}
      data-id={task.id}
      onFocus={() => (selected.value = task.id)}
      onClick={() => (selected.value = task.id)}
      onKeyDown={props.onKey}
      onDragStart={(e) => {
        e.dataTransfer?.setData("text/plain", task.id);
        if (e.dataTransfer) e.dataTransfer.effectAllowed = "move";
      }}
      onDragOver={(e) => e.preventDefault()}
      onDrop={props.onDrop}
    >
      <span class="addr" aria-hidden="true">
        {firstLine(task)}
      </span>
      <span id={`desc-${task.id}`}>
        <span class="state">{stateLabel(task.state)}</span> <span class="window">{span}</span>{" "}
        <span class="contact">{contact}</span>
      </span>
    </li>
  );
}
