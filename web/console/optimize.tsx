import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { errorMessage } from "../shared/api";
import { formatDuration, formatKm, todayIn } from "../shared/format";
import { type MessageKey, t } from "../shared/i18n";
import { UNASSIGNED } from "./board";
import { firstLine } from "./board-view";
import { Dialog } from "./dialogs";
import { board, date, loadDay, notice, session, tasks, workerName, workers } from "./state";

/** A route's figures: its stops, distance (m) and duration (s); a route the plan leaves empty: 0. */
type Figures = { stops: number; distance: number; duration: number };

type Proposal = {
  id: string;
  /** Planned from now (the day shown is today): finished stops stay in front. */
  fromNow: boolean;
  result: {
    routes: { route: string; stops: { task: string }[]; distance_m: number; duration_s: number }[];
    unassigned: { task: string; reason: string }[];
    distance_m: number;
    duration_s: number;
    /** The routes as they stand, through the same travel model (the service's `before`). */
    before: {
      routes: { route: string; tasks: string[]; distance_m: number; duration_s: number }[];
      distance_m: number;
      duration_s: number;
    };
  };
  /** Route URL → its worker's URL, in the order the workers are shown. */
  assignees: Map<string, string>;
};

const FINISHED = ["completed", "failed", "cancelled"];

/** Per worker of the proposal: its route's figures before (as it stands) and after (the plan). */
function perWorker(p: Proposal) {
  return [...p.assignees.entries()].map(([route, worker]) => {
    const b = p.result.before.routes.find((x) => x.route === route);
    const a = p.result.routes.find((x) => x.route === route);
    const before: Figures = {
      stops: b?.tasks.length ?? 0,
      distance: b?.distance_m ?? 0,
      duration: b?.duration_s ?? 0,
    };
    const after: Figures = {
      stops: a?.stops.length ?? 0,
      distance: a?.distance_m ?? 0,
      duration: a?.duration_s ?? 0,
    };
    return { worker, before, after };
  });
}

/**
 * Optimize the shown workers' day (contract §26): a route per worker (made when missing), the
 * day's unassigned tasks offered too, solved with `apply: false`; on today's date from now
 * (contract §30: finished stops stay, the stop under way first, from where the worker is). The
 * proposal shows each worker's stops, distance and time before and after, and the totals; it is
 * applied as one batch of task commands (assign/reassign, then route and position), or discarded.
 */
export function OptimizeDialog({ onClose }: { onClose: () => void }) {
  const proposal = useSignal<Proposal | null>(null);
  const error = useSignal("");
  const busy = useSignal(true);
  useEffect(() => {
    propose().then(
      (p) => {
        proposal.value = p;
        busy.value = false;
      },
      (err) => {
        error.value = t("optimize.failed", { reason: (err as Error).message });
        busy.value = false;
      },
    );
  }, []);
  const p = proposal.value;
  const taskName = (url: string) => {
    const task = [...tasks.value.values()].find((x) => x.url === url);
    return task ? firstLine(task) : url;
  };
  const cells = (before: string | number, after: string | number) => (
    <>
      <td>{before}</td>
      <td>{after}</td>
    </>
  );
  return (
    <Dialog id="optimize" title={t("optimize.heading")} onClose={onClose}>
      {busy.value && <p role="status">{t("optimize.running")}</p>}
      {error.value && <p role="alert">{error.value}</p>}
      {p && (
        <>
          {p.fromNow && <p>{t("optimize.fromNow")}</p>}
          <table class="compare">
            <thead>
              <tr>
                <th scope="col" rowspan={2}>
                  {t("optimize.worker")}
                </th>
                <th scope="colgroup" colspan={2}>
                  {t("optimize.stops")}
                </th>
                <th scope="colgroup" colspan={2}>
                  {t("optimize.distance")}
                </th>
                <th scope="colgroup" colspan={2}>
                  {t("optimize.duration")}
                </th>
              </tr>
              <tr>
                {[0, 1, 2].flatMap((k) => [
                  <th scope="col" key={`b${k}`}>
                    {t("optimize.before")}
                  </th>,
                  <th scope="col" key={`a${k}`}>
                    {t("optimize.after")}
                  </th>,
                ])}
              </tr>
            </thead>
            <tbody>
              {perWorker(p).map(({ worker, before, after }) => (
                <tr key={worker}>
                  <th scope="row">{workerName(worker)}</th>
                  {cells(before.stops, after.stops)}
                  {cells(formatKm(before.distance), formatKm(after.distance))}
                  {cells(formatDuration(before.duration), formatDuration(after.duration))}
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr>
                <th scope="row">{t("optimize.total")}</th>
                {cells(
                  p.result.before.routes.reduce((n, r) => n + r.tasks.length, 0),
                  p.result.routes.reduce((n, r) => n + r.stops.length, 0),
                )}
                {cells(formatKm(p.result.before.distance_m), formatKm(p.result.distance_m))}
                {cells(formatDuration(p.result.before.duration_s), formatDuration(p.result.duration_s))}
              </tr>
            </tfoot>
          </table>
          <h3>{t("optimize.unassigned")}</h3>
          {p.result.unassigned.length ? (
            <ul>
              {p.result.unassigned.map((u) => (
                <li key={u.task}>
                  {taskName(u.task)}: {t(`reason.${u.reason}` as MessageKey)}
                </li>
              ))}
            </ul>
          ) : (
            <p>{t("optimize.none")}</p>
          )}
        </>
      )}
      <div class="buttons">
        {p && (
          <button
            type="button"
            disabled={busy.value}
            onClick={async () => {
              busy.value = true;
              const why = await apply(p);
              busy.value = false;
              if (why) error.value = t("optimize.failed", { reason: why });
              else {
                notice.value = { text: t("optimize.applied"), error: false };
                onClose();
              }
            }}
          >
            {t("optimize.apply")}
          </button>
        )}
        <button type="button" onClick={onClose}>
          {p ? t("optimize.discard") : t("close")}
        </button>
      </div>
    </Dialog>
  );
}

async function propose(): Promise<Proposal> {
  const s = session.value!;
  const c = s.client;
  const day = date.value;
  const lanes = board.value;
  const shown = workers.value.filter((w) => (lanes.get(w.url) ?? []).length > 0);
  const all = shown.length ? shown : workers.value;
  if (!all.length) throw new Error(t("optimize.noWorkers"));
  const existing = await c.GET("/routes/", { params: { query: { date: day, page_size: 500 } } });
  if (!existing.data) throw new Error(errorMessage(existing.error, "routes"));
  const routes = new Map<string, { url: string }>();
  for (const r of existing.data.results) {
    if (r.assignee && r.state !== "archived" && !routes.has(r.assignee)) routes.set(r.assignee, r as never);
  }
  for (const w of all) {
    if (routes.has(w.url)) continue;
    const made = await c.POST("/routes/", {
      body: { name: `${w.name} ${day}`, assignee: w.url, date: day } as never,
    });
    if (!made.data) throw new Error(errorMessage(made.error, "route"));
    routes.set(w.url, made.data as never);
  }
  const routeUrls = new Set([...routes.values()].map((r) => r.url));
  // Tasks on a route of this run take part anyway; the others of the day are offered.
  const offered = [...lanes.entries()]
    .filter(([lane]) => lane === UNASSIGNED || routes.has(lane))
    .flatMap(([, list]) => list)
    .filter((x) => !x.route || !routeUrls.has(x.route))
    .filter((x) => ["unassigned", "assigned", "accepted", "draft"].includes(x.state))
    .map((x) => x.url);
  // Today: from now (contract §30); another day is planned whole.
  const fromNow = day === todayIn(s.zone);
  const posted = await c.POST("/route_optimizations/", {
    body: { routes: [...routeUrls], tasks: offered, apply: false, from_now: fromNow } as never,
  });
  if (!posted.data) throw new Error(errorMessage(posted.error, "optimization"));
  const id = (posted.data as { id: string }).id;
  for (let i = 0; i < 600; i++) {
    const r = await c.GET("/route_optimizations/{id}/", { params: { path: { id } } });
    const o = r.data as
      | { state: string; result: Proposal["result"] | null; error_message?: string }
      | undefined;
    if (o?.state === "completed" && o.result) {
      const assignees = new Map([...routes.entries()].map(([w, r]) => [r.url, w]));
      return { id, fromNow, result: o.result, assignees };
    }
    if (o?.state === "failed") throw new Error(o.error_message || "failed");
    await new Promise((res) => setTimeout(res, 300));
  }
  throw new Error("timeout");
}

async function apply(p: Proposal): Promise<string | null> {
  const c = session.value!.client;
  const all = [...tasks.value.values()];
  const byUrl = new Map(all.map((x) => [x.url, x]));
  const time = new Date().toISOString();
  const commands: object[] = [];
  const id = () => `console-${crypto.randomUUID()}`;
  for (const r of p.result.routes) {
    const assignee = p.assignees.get(r.route)!;
    // From now, the route's finished tasks keep their places in front: the plan follows them.
    const after = p.fromNow
      ? Math.max(
          0,
          ...all.filter((x) => x.route === r.route && FINISHED.includes(x.state)).map((x) => x.position ?? 0),
        )
      : 0;
    r.stops.forEach((stop, k) => {
      const task = byUrl.get(stop.task);
      if (!task) return;
      const position = after + k + 1;
      const td = { route: r.route, position };
      if (task.assignee && task.assignee !== assignee) {
        commands.push({
          task: task.url,
          action: "reassign",
          assignee,
          external_id: id(),
          time,
          task_data: { position },
        });
      } else if (!task.assignee) {
        commands.push({ task: task.url, action: "assign", assignee, external_id: id(), time });
      }
      commands.push({ task: task.url, action: "update", external_id: id(), time, task_data: td });
    });
  }
  for (let i = 0; i < commands.length; i += 500) {
    const r = await c.POST("/task_commands/", { body: commands.slice(i, i + 500) as never });
    if (!r.data) return errorMessage(r.error, "commands");
    const refused = (r.data as unknown as { state: string; error_message: string }[]).find(
      (x) => x.state === "rejected",
    );
    if (refused) return refused.error_message;
  }
  await loadDay();
  return null;
}
