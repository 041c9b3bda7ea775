import { nonFieldError } from "../../http/errors";
import { parseHyperlink } from "../../http/urls";
import { type ReportData, renderRouteReportHtml } from "../../render/route-report";
import { renderRouteReportPdf } from "../../render/route-report-pdf";
import type { Principal } from "../auth/principal";
import { parseJson } from "../tasks/types";
import { getOptimization } from "./index";
import type { resultOf } from "./run";

type Result = ReturnType<typeof resultOf>;

/** The report's data: the result with routes and tasks named as people know them. */
export async function optimizationReport(db: D1Database, p: Principal, id: string, format: "html" | "pdf") {
  const row = await getOptimization(db, p, id);
  const result = parseJson<Result | null>(row.result, null);
  if (row.state !== "completed" || !result)
    throw nonFieldError(`The optimization is ${row.state}: no report yet.`);
  const routeIds = result.routes.map((r) => parseHyperlink(r.route, "routes")!);
  const taskIds = [
    ...result.routes.flatMap((r) => r.stops.map((s) => s.task)),
    ...result.unassigned.map((u) => u.task),
  ].map((u) => parseHyperlink(u, "tasks")!);
  const [routes, tasks, account] = await db.batch([
    db
      .prepare("SELECT id, name FROM routes WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))")
      .bind(p.accountId, JSON.stringify(routeIds)),
    db
      .prepare(
        "SELECT id, description, address FROM tasks WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))",
      )
      .bind(p.accountId, JSON.stringify(taskIds)),
    db.prepare("SELECT timezone FROM accounts WHERE id = ?").bind(p.accountId),
  ]);
  const routeName = new Map((routes.results as { id: string; name: string }[]).map((r) => [r.id, r.name]));
  const taskName = new Map(
    (tasks.results as { id: string; description: string; address: string }[]).map((t) => {
      const a = parseJson<{ formatted_address?: string | null; raw_address?: string }>(t.address, {});
      return [t.id, a.formatted_address || a.raw_address || t.description || t.id];
    }),
  );
  const taskLabel = (url: string | null) =>
    taskName.get(parseHyperlink(url ?? "", "tasks") ?? "") ?? url ?? "";
  const data: ReportData = {
    title: `Route optimization ${row.id.slice(0, 8)}`,
    state: row.state,
    timeZone: (account.results[0] as { timezone: string } | undefined)?.timezone ?? "UTC",
    routes: result.routes.map((r) => ({
      label: routeName.get(parseHyperlink(r.route ?? "", "routes") ?? "") || (r.route ?? ""),
      stops: r.stops.map((s) => ({ ...s, label: taskLabel(s.task) })),
      distance_m: r.distance_m,
      duration_s: r.duration_s,
    })),
    unassigned: result.unassigned.map((u) => ({ label: taskLabel(u.task), reason: u.reason })),
    distance_m: result.distance_m,
    duration_s: result.duration_s,
  };
  return format === "pdf" ? renderRouteReportPdf(data) : renderRouteReportHtml(data);
}
