import { signal, useSignal } from "@preact/signals";
import { memo } from "preact/compat";
import { useEffect, useLayoutEffect, useRef } from "preact/hooks";
import { TASK_STATES } from "../../src/domain/task-state-machine";
import type { Task } from "../shared/api";
import { firstLine, timeOfDay, timeRange } from "../shared/format";
import { lang, type MessageKey, t, tn } from "../shared/i18n";
import { LanguagePicker } from "./app";
import { AutoAssignDialog } from "./auto-assign";
import { UNASSIGNED } from "./board";
import { AssignDialog, TaskDialog } from "./dialogs";
import { MapRegion } from "./map-region";
import { OptimizeDialog } from "./optimize";
import {
  board,
  date,
  duty,
  lateCount,
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

/** The state filter's choices: the API's own list (contract §5). */
export const STATES = TASK_STATES;
export const stateLabel = (s: string) => t(`s.${s}` as MessageKey);

/** An item's name (contract §26): its address's first line. */
export { firstLine };

type DialogName = "assign" | "new" | "edit" | "optimize" | null | "autoAssign";
const dialog = signal<DialogName>(null);

/** The "Assign" dialog for the selected task (the button, the `a` key, Enter on an item). */
function openAssign() {
  if (selected.value) dialog.value = "assign";
  else notice.value = { text: t("assign.none"), error: true };
}

/** The "Edit task" dialog for the selected task (the button, the `e` key). */
function openEdit() {
  if (selected.value) dialog.value = "edit";
  else notice.value = { text: t("assign.none"), error: true };
}

export function Board() {
  const s = session.value!;
  useEffect(() => {
    if (!loading.value && timings.dataAt && !timings.renderedAt) {
      // After the browser has painted the board: the bench's "usable" moment.
      requestAnimationFrame(() => setTimeout(() => (timings.renderedAt = performance.now())));
    }
  });
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
          <button type="button" onClick={openEdit}>
            {t("editTask")}
          </button>
          <button type="button" onClick={() => (dialog.value = "optimize")}>
            {t("optimize")}
          </button>
          <button type="button" onClick={() => (dialog.value = "autoAssign")}>
            {t("autoAssign")}
          </button>
          <p role="status" class={`live ${streamStatus.value}`}>
            {streamStatus.value === "live" ? t("live") : t("reconnecting")}
          </p>
          <p role="status" class={`late-count${lateCount.value ? " some" : ""}`}>
            {tn("late.count", lateCount.value)}
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
              onDuty={lane === UNASSIGNED ? null : (duty.value.get(lane) ?? false)}
              selectedId={list.some((x) => x.id === selected.value) ? selected.value : null}
              zone={s.zone}
              day={date.value}
              lang={lang.value}
            />
          ))}
        </div>
        <MapRegion />
      </main>
      {dialog.value === "assign" && <AssignDialog onClose={() => (dialog.value = null)} />}
      {dialog.value === "new" && <TaskDialog onClose={() => (dialog.value = null)} />}
      {dialog.value === "edit" && selected.value && tasks.value.get(selected.value) && (
        <TaskDialog task={tasks.value.get(selected.value)} onClose={() => (dialog.value = null)} />
      )}
      {dialog.value === "optimize" && <OptimizeDialog onClose={() => (dialog.value = null)} />}
      {dialog.value === "autoAssign" && <AutoAssignDialog onClose={() => (dialog.value = null)} />}
    </div>
  );
}

/** Moves focus to another item of the board (roving tabindex: one tab stop per list). */
function focusItem(id: string | undefined) {
  if (!id) return;
  selected.value = id;
  // The item may be outside its list's window until the list has scrolled to it.
  let tries = 0;
  const go = () => {
    const el = document.getElementById(`task-${id}`);
    if (el) el.focus();
    else if (tries++ < 10) requestAnimationFrame(go);
  };
  requestAnimationFrame(go);
}

/**
 * A list renders only the rows in and near its scrolled view (rows have a fixed height), and a
 * lane outside the board's horizontal view renders none until it comes near: a day of 2,000
 * tasks is a few hundred elements. Each item says its place in the whole list (aria-posinset,
 * aria-setsize), so a screen reader hears "3 of 40" whatever is rendered.
 */
const ROW_PX = 82;
const OVERSCAN = 8;

type LaneProps = {
  lane: string;
  list: Task[];
  title: string;
  /** The worker's duty (contract §30); null for Unassigned. */
  onDuty: boolean | null;
  selectedId: string | null;
  zone: string;
  /** The shown day (`YYYY-MM-DD`): an ETA on another day is shown with its date. */
  day: string;
  lang: string;
};

/** The element id of a lane's region (a marker on the map focuses it). */
export const laneRegionId = (lane: string) =>
  `region-${lane === UNASSIGNED ? UNASSIGNED : lane.replace(/\W+/g, "-")}`;

const Lane = memo(function Lane(props: LaneProps) {
  const { lane, list, title, selectedId, zone, day, onDuty } = props;
  const headingId = `lane-${lane === UNASSIGNED ? UNASSIGNED : lane.replace(/\W+/g, "-")}`;
  const over = useSignal(false);
  const near = useSignal(false);
  const scrollTop = useSignal(0);
  const height = useSignal(20 * ROW_PX);
  const section = useRef<HTMLElement>(null);
  const ul = useRef<HTMLUListElement>(null);
  const stop = selectedId ?? list[0]?.id;

  useEffect(() => {
    const el = section.current;
    const box = ul.current;
    if (!el || !box) return;
    const io = new IntersectionObserver(([e]) => (near.value = e.isIntersecting), {
      rootMargin: "0px 600px",
    });
    io.observe(el);
    // The list's box has a fixed height (styles.css), so the rows it renders never change it:
    // measuring it cannot feed back into what is rendered.
    const ro = new ResizeObserver(() => {
      const h = box.clientHeight;
      if (h && Math.abs(h - height.value) > 1) height.value = h;
    });
    ro.observe(box);
    return () => {
      io.disconnect();
      ro.disconnect();
    };
  }, []);
  // Keep the selected item inside the window (keyboard moves, a marker clicked on the map).
  const selIndex = selectedId ? list.findIndex((x) => x.id === selectedId) : -1;
  useLayoutEffect(() => {
    const el = ul.current;
    if (!el || selIndex < 0) return;
    const top = selIndex * ROW_PX;
    if (top < el.scrollTop || top + ROW_PX > el.scrollTop + el.clientHeight) {
      el.scrollTop = Math.max(0, top - el.clientHeight / 2);
      scrollTop.value = el.scrollTop;
    }
  }, [selIndex]);

  const shown = near.value || selIndex >= 0;
  const first = shown ? Math.max(0, Math.floor(scrollTop.value / ROW_PX) - OVERSCAN) : 0;
  const last = shown
    ? Math.min(list.length, Math.ceil((scrollTop.value + height.value) / ROW_PX) + OVERSCAN)
    : 0;
  const dropAt = (e: DragEvent, index: number) => {
    e.preventDefault();
    e.stopPropagation();
    over.value = false;
    const id = e.dataTransfer?.getData("text/plain");
    if (id && tasks.value.has(id)) moveTask(id, lane, index);
  };
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
      const order = [...board.value.keys()];
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
      openAssign();
    } else if (key === "u") {
      e.preventDefault();
      moveTask(task.id, UNASSIGNED, 0);
    } else if (key === "e") {
      e.preventDefault();
      selected.value = task.id;
      openEdit();
    }
  };
  return (
    <section
      ref={section}
      id={laneRegionId(lane)}
      tabIndex={-1}
      class={`lane ${over.value ? "over" : ""}`}
      aria-labelledby={headingId}
    >
      <h2 id={headingId}>
        {title} <span class="count">{tn("tasks.count", list.length)}</span>
        {onDuty !== null && (
          <span class={`duty ${onDuty ? "on" : "off"}`}>{onDuty ? t("duty.on") : t("duty.off")}</span>
        )}
      </h2>
      <ul
        ref={ul}
        data-count={list.length}
        style={{ paddingTop: `${first * ROW_PX}px`, paddingBottom: `${(list.length - last) * ROW_PX}px` }}
        onScroll={(e) => (scrollTop.value = e.currentTarget.scrollTop)}
        onDragOver={(e) => {
          e.preventDefault();
          over.value = true;
        }}
        onDragLeave={() => (over.value = false)}
        onDrop={(e) => dropAt(e, list.length)}
      >
        {list.slice(first, last).map((task, k) => (
          <Item
            key={task.id}
            task={task}
            index={first + k}
            size={list.length}
            zone={zone}
            day={day}
            tabStop={task.id === stop}
            isSelected={task.id === selectedId}
            onKey={onKey}
            onDrop={dropAt}
          />
        ))}
      </ul>
    </section>
  );
});

type ItemProps = {
  task: Task;
  index: number;
  size: number;
  zone: string;
  day: string;
  tabStop: boolean;
  isSelected: boolean;
  onKey: (e: KeyboardEvent, index: number) => void;
  onDrop: (e: DragEvent, index: number) => void;
};

/** Re-rendered only when its task, place or selection changes (not for another lane's move). */
const Item = memo(
  function Item(props: ItemProps) {
    const { task, index } = props;
    const span = timeRange(task.complete_after, task.complete_before, props.zone) ?? t("task.noWindow");
    const contact =
      [task.contact?.name, task.contact?.phones?.[0]].filter(Boolean).join(" · ") || t("task.noContact");
    return (
      <li
        id={`task-${task.id}`}
        class={`task s-${task.state}${props.isSelected ? " selected" : ""}`}
        tabIndex={props.tabStop ? 0 : -1}
        draggable
        aria-label={firstLine(task)}
        aria-describedby={`desc-${task.id}`}
        aria-current={props.isSelected ? "true" : undefined}
        aria-posinset={index + 1}
        aria-setsize={props.size}
        data-id={task.id}
        onFocus={() => (selected.value = task.id)}
        onClick={() => (selected.value = task.id)}
        onKeyDown={(e) => props.onKey(e, index)}
        onDragStart={(e) => {
          e.dataTransfer?.setData("text/plain", task.id);
          if (e.dataTransfer) e.dataTransfer.effectAllowed = "move";
        }}
        onDragOver={(e) => e.preventDefault()}
        onDrop={(e) => props.onDrop(e, index)}
      >
        <span class="addr" aria-hidden="true">
          {firstLine(task)}
        </span>
        <span id={`desc-${task.id}`} class="desc">
          <span class="line">
            <span class="state">{stateLabel(task.state)}</span> <span class="window">{span}</span>
          </span>{" "}
          <span class="line">
            {task.eta && (
              <span class="eta">
                {t("eta")} {timeOfDay(task.eta, props.zone, props.day)}
              </span>
            )}{" "}
            {task.is_late && <span class="late-badge">{t("late")}</span>}{" "}
            <span class="contact">{contact}</span>
          </span>
        </span>
      </li>
    );
  },
  // The handlers are remade with their lane; what they do depends only on the list and index.
  (a, b) =>
    a.task === b.task &&
    a.index === b.index &&
    a.size === b.size &&
    a.tabStop === b.tabStop &&
    a.isSelected === b.isSelected &&
    a.zone === b.zone &&
    a.day === b.day &&
    a.onKey === b.onKey,
);
