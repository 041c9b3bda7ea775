import { computed } from "@preact/signals";
import type { Task } from "../shared/api";
import { t } from "../shared/i18n";
import { UNASSIGNED } from "./board";
import { firstLine } from "./board-view";
import { board, selected } from "./state";

const W = 600;
const H = 600;
const PAD = 20;

type Pt = { task: Task; x: number; y: number };

const coords = (task: Task): [number, number] | null => {
  const loc = task.address?.location as { coordinates?: [number, number] } | null | undefined;
  return loc?.coordinates ?? null;
};

/**
 * Markers and route lines on a plain background, drawn from the tasks' coordinates alone: no
 * tile, style or font request leaves the origin (contract §26). Equirectangular, with the
 * longitude scaled by cos(latitude) so a city keeps its shape.
 */
const layout = computed(() => {
  const lanes = board.value;
  const all: [Task, [number, number]][] = [];
  for (const list of lanes.values())
    for (const task of list) {
      const c = coords(task);
      if (c) all.push([task, c]);
    }
  if (!all.length) return { points: new Map<string, Pt>(), lines: [] as { lane: string; d: string }[] };
  let [minX, minY, maxX, maxY] = [180, 90, -180, -90];
  for (const [, [x, y]] of all) {
    minX = Math.min(minX, x);
    maxX = Math.max(maxX, x);
    minY = Math.min(minY, y);
    maxY = Math.max(maxY, y);
  }
  const k = Math.cos((((minY + maxY) / 2) * Math.PI) / 180);
  const spanX = Math.max((maxX - minX) * k, 1e-4);
  const spanY = Math.max(maxY - minY, 1e-4);
  const scale = Math.min((W - 2 * PAD) / spanX, (H - 2 * PAD) / spanY);
  const points = new Map<string, Pt>();
  for (const [task, [x, y]] of all) {
    points.set(task.id, { task, x: PAD + (x - minX) * k * scale, y: H - PAD - (y - minY) * scale });
  }
  const lines: { lane: string; d: string }[] = [];
  for (const [lane, list] of lanes) {
    if (lane === UNASSIGNED) continue;
    const pts = list.map((task) => points.get(task.id)).filter((p): p is Pt => !!p);
    if (pts.length > 1)
      lines.push({ lane, d: `M${pts.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join("L")}` });
  }
  return { points, lines };
});

export function MapRegion() {
  const { points, lines } = layout.value;
  const sel = selected.value;
  return (
    <section class="map" aria-label={t("map")}>
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: a pointer shortcut only; the keyboard selects the same tasks in the lists, and the map follows. */}
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={t("map")}
        onClick={(e) => {
          const id = (e.target as Element).getAttribute("data-id");
          if (!id) return;
          selected.value = id;
          document.getElementById(`task-${id}`)?.scrollIntoView({ block: "nearest" });
        }}
      >
        <rect width={W} height={H} class="bg" />
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
      </svg>
    </section>
  );
}
