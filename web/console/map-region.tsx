import { computed, signal, useSignal } from "@preact/signals";
import { memo } from "preact/compat";
import { useEffect, useRef } from "preact/hooks";
import type { Task } from "../shared/api";
import { t } from "../shared/i18n";
import { UNASSIGNED } from "./board";
import { firstLine, laneRegionId } from "./board-view";
import { board, duty, positions, selected, selectedWorker, workers } from "./state";

/** The plain map's drawing size: its box's, so the map takes the room the page gives it. */
const size = signal({ w: 600, h: 600 });
const PAD = 24;

type Pt = { task: Task; x: number; y: number };
/** An on-duty worker with a position (contract §30): a named button on the map. */
export type WorkerPin = { url: string; name: string; lon: number; lat: number; x: number; y: number };

/** On-duty workers with a position, by name. */
const onDutyFixes = computed(() => {
  const out: Omit<WorkerPin, "x" | "y">[] = [];
  for (const w of workers.value) {
    const fix = positions.value.get(w.url);
    if (fix && duty.value.get(w.url)) out.push({ url: w.url, name: w.name, lon: fix.lon, lat: fix.lat });
  }
  return out;
});

const coords = (task: Task): [number, number] | null => {
  const loc = task.address?.location as { coordinates?: [number, number] } | null | undefined;
  return loc?.coordinates ?? null;
};

/** The tasks on the board with coordinates, and their extent (read again only when the board changes). */
const taskCoords = computed(() => {
  const all: [Task, [number, number]][] = [];
  const box = [180, 90, -180, -90];
  for (const list of board.value.values())
    for (const task of list) {
      const c = coords(task);
      if (!c) continue;
      all.push([task, c]);
      grow(box, c[0], c[1]);
    }
  return { all, box };
});

function grow(box: number[], x: number, y: number) {
  box[0] = Math.min(box[0], x);
  box[1] = Math.min(box[1], y);
  box[2] = Math.max(box[2], x);
  box[3] = Math.max(box[3], y);
}

/**
 * The drawing's bounds as one string: a position that stays inside them changes nothing but its
 * own marker (a signal whose value is equal notifies no one), so the tasks' layer is not laid
 * out again for each of hundreds of positions a second.
 */
const bounds = computed(() => {
  const box = [...taskCoords.value.box];
  for (const p of onDutyFixes.value) grow(box, p.lon, p.lat);
  const { w, h } = size.value;
  return box[0] > box[2] ? "" : `${box.join(",")},${w},${h}`;
});

/**
 * Markers and route lines on a plain background, drawn from the tasks' coordinates alone: no
 * tile, style or font request leaves the origin (contract §26). Equirectangular, with the
 * longitude scaled by cos(latitude) so a city keeps its shape.
 */
const projection = computed(() => {
  if (!bounds.value) return null;
  const [minX, minY, maxX, maxY, W, H] = bounds.value.split(",").map(Number);
  const k = Math.cos((((minY + maxY) / 2) * Math.PI) / 180);
  const spanX = Math.max((maxX - minX) * k, 1e-4);
  const spanY = Math.max(maxY - minY, 1e-4);
  const scale = Math.min((W - 2 * PAD) / spanX, (H - 2 * PAD) / spanY);
  // Centred in the box: the spare room is shared on both sides.
  const offX = (W - 2 * PAD - spanX * scale) / 2;
  const offY = (H - 2 * PAD - spanY * scale) / 2;
  return {
    x: (x: number) => PAD + offX + (x - minX) * k * scale,
    y: (y: number) => H - PAD - offY - (y - minY) * scale,
  };
});

const taskLayer = computed(() => {
  const p = projection.value;
  const points = new Map<string, Pt>();
  const lines: { lane: string; d: string }[] = [];
  if (!p) return { points, lines };
  for (const [task, [x, y]] of taskCoords.value.all) points.set(task.id, { task, x: p.x(x), y: p.y(y) });
  for (const [lane, list] of board.value) {
    if (lane === UNASSIGNED) continue;
    const pts = list.map((task) => points.get(task.id)).filter((q): q is Pt => !!q);
    if (pts.length > 1)
      lines.push({ lane, d: `M${pts.map((q) => `${q.x.toFixed(1)},${q.y.toFixed(1)}`).join("L")}` });
  }
  return { points, lines };
});

const pinLayer = computed((): WorkerPin[] => {
  const p = projection.value;
  return p ? onDutyFixes.value.map((f) => ({ ...f, x: p.x(f.lon), y: p.y(f.lat) })) : [];
});

/** A worker's marker pressed: its region (the lane) is brought into view and focused (contract §30). */
export function selectWorker(url: string) {
  selectedWorker.value = url;
  const region = document.getElementById(laneRegionId(url));
  region?.scrollIntoView({ block: "nearest", inline: "nearest" });
  region?.focus();
}

/** The operator's map style, named by the server in the page (src/apps/docs.ts), or null. */
const mapStyle = () => document.querySelector<HTMLMetaElement>('meta[name="map-style"]')?.content || null;

export function MapRegion() {
  const style = mapStyle();
  return style ? <Basemap style={style} /> : <PlainMap />;
}

function select(id: string) {
  selected.value = id;
  document.getElementById(`task-${id}`)?.scrollIntoView({ block: "nearest" });
}

/** MapLibre over the operator's style, its code fetched when this first renders. */
function Basemap({ style }: { style: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const map = useRef<{ update: (d: import("./maplibre-map").MapData) => void; destroy: () => void } | null>(
    null,
  );
  const loaded = useSignal(false);
  useEffect(() => {
    let gone = false;
    import("./maplibre-map").then(({ createBasemap }) => {
      if (gone || !ref.current) return;
      map.current = createBasemap(ref.current, style, select, selectWorker);
      loaded.value = true;
    });
    return () => {
      gone = true;
      map.current?.destroy();
    };
  }, [style]);
  const data = basemapData.value;
  useEffect(() => {
    map.current?.update(data);
  }, [data, loaded.value]);
  return (
    <section class="map" aria-label={t("map")}>
      {!loaded.value && <p>{t("map.loading")}</p>}
      <div ref={ref} class="basemap" />
    </section>
  );
}

/** The tasks' part of the basemap's data, apart from the workers': a position leaves it as it was. */
const basemapTasks = computed(() => {
  const points: { id: string; name: string; state: string; lon: number; lat: number }[] = [];
  const lines: { lane: string; coords: [number, number][] }[] = [];
  for (const [lane, list] of board.value) {
    const coordsOfLane: [number, number][] = [];
    for (const task of list) {
      const c = coords(task);
      if (!c) continue;
      points.push({ id: task.id, name: firstLine(task), state: task.state, lon: c[0], lat: c[1] });
      coordsOfLane.push([c[0], c[1]]);
    }
    if (lane !== UNASSIGNED && coordsOfLane.length > 1) lines.push({ lane, coords: coordsOfLane });
  }
  return { points, lines };
});

const basemapData = computed(() => ({
  ...basemapTasks.value,
  selected: selected.value,
  workers: onDutyFixes.value,
}));

/** The map without a style: SVG, no request at all; workers as buttons over it. */
function PlainMap() {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const ro = new ResizeObserver(() => {
      const w = Math.round(el.clientWidth);
      const h = Math.round(el.clientHeight);
      if (w > 0 && h > 0 && (w !== size.value.w || h !== size.value.h)) size.value = { w, h };
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  const { w: W, h: H } = size.value;
  return (
    <section class="map" aria-label={t("map")}>
      <div class="plain" ref={box}>
        {/* biome-ignore lint/a11y/useKeyWithClickEvents: a pointer shortcut only; the keyboard selects the same tasks in the lists, and the map follows. */}
        <svg
          viewBox={`0 0 ${W} ${H}`}
          role="img"
          aria-label={t("map")}
          onClick={(e) => {
            const id = (e.target as Element).getAttribute("data-id");
            if (id) select(id);
          }}
        >
          <rect width={W} height={H} class="bg" />
          <TaskLayer />
        </svg>
        <Pins />
      </div>
    </section>
  );
}

/** The tasks' markers and route lines: drawn again when the board or the bounds change. */
function TaskLayer() {
  const { points, lines } = taskLayer.value;
  const sel = selected.value;
  return (
    <>
      {lines.map((l, i) => (
        <path key={l.lane} d={l.d} class={`route r${i % 8}`} />
      ))}
      {[...points.values()].map((p) => (
        <circle
          key={p.task.id}
          cx={p.x}
          cy={p.y}
          r={p.task.id === sel ? 9 : 5}
          class={`marker s-${p.task.state}${p.task.id === sel ? " selected" : ""}`}
          data-id={p.task.id}
        >
          <title>{firstLine(p.task)}</title>
        </circle>
      ))}
    </>
  );
}

/** On-duty workers as buttons over the map; a position moves its own button only. */
function Pins() {
  const chosen = selectedWorker.value;
  return (
    <>
      {pinLayer.value.map((p) => (
        <Pin key={p.url} url={p.url} name={p.name} x={p.x} y={p.y} selected={chosen === p.url} />
      ))}
    </>
  );
}

const Pin = memo(function Pin(p: { url: string; name: string; x: number; y: number; selected: boolean }) {
  return (
    <button
      type="button"
      class={`worker-pin${p.selected ? " selected" : ""}`}
      style={{ transform: `translate(${p.x.toFixed(1)}px, ${p.y.toFixed(1)}px) translate(-50%, -50%)` }}
      data-worker={p.url}
      onClick={() => selectWorker(p.url)}
    >
      {p.name}
    </button>
  );
});
