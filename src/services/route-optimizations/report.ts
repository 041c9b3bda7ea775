/**
 * The route-optimization report (contract §16): the stored result with its routes and tasks named
 * as people know them, rendered as HTML or PDF (src/render) in the request's language.
 */
import { LOCALES, type Locale } from "../../domain/locales";
import { negotiateLanguage } from "../../domain/tracker";
import { nonFieldError } from "../../http/errors";
import { parseHyperlink } from "../../http/urls";
import type { LonLat } from "../../render/route-map";
import { type ReportData, type ReportTask, renderRouteReportHtml } from "../../render/route-report";
import { renderRouteReportPdf } from "../../render/route-report-pdf";
import type { Principal } from "../auth/principal";
import { documentFonts } from "../documents/fonts";
import { parseJson } from "../tasks/types";
import { getOptimization } from "./index";
import type { resultOf } from "./run";

type Result = ReturnType<typeof resultOf>;
type StoredAddress = {
  formatted_address?: string | null;
  raw_address?: string;
  location?: { coordinates?: [number, number] } | null;
};

const pointOf = (a: StoredAddress | null): LonLat | null => {
  const c = a?.location?.coordinates;
  return Array.isArray(c) && c.length === 2 && c.every(Number.isFinite) ? [c[0], c[1]] : null;
};
const addressLine = (a: StoredAddress | null) => a?.formatted_address || a?.raw_address || "";
/** The first line of a description, cut at 80 characters: a name, not the whole note. */
const shortName = (s: string) => {
  const first = s.trim().split(/\r?\n/)[0].trim();
  return first.length > 80 ? `${first.slice(0, 79).trimEnd()}…` : first;
};

/** The report's data: the result with routes and tasks named as people know them. */
export async function reportData(
  db: D1Database,
  p: Principal,
  id: string,
  acceptLanguage: string | null | undefined,
): Promise<ReportData> {
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
      .prepare(
        "SELECT id, name, start_address, end_address FROM routes WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))",
      )
      .bind(p.accountId, JSON.stringify(routeIds)),
    db
      .prepare(
        `SELECT t.id, t.description, t.address, t.contact, o.reference FROM tasks t
         LEFT JOIN orders o ON o.id = t.order_id AND o.account_id = t.account_id
         WHERE t.account_id = ? AND t.id IN (SELECT value FROM json_each(?))`,
      )
      .bind(p.accountId, JSON.stringify(taskIds)),
    db.prepare("SELECT timezone, language FROM accounts WHERE id = ?").bind(p.accountId),
  ]);
  type RouteRow = { id: string; name: string; start_address: string | null; end_address: string | null };
  const routeOf = new Map((routes.results as RouteRow[]).map((r) => [r.id, r]));
  type TaskRow = {
    id: string;
    description: string;
    address: string;
    contact: string;
    reference: string | null;
  };
  const taskOf = new Map(
    (tasks.results as TaskRow[]).map((t): [string, ReportTask] => {
      const a = parseJson<StoredAddress>(t.address, {});
      const contact = parseJson<{ name?: string; company?: string }>(t.contact, {});
      return [
        t.id,
        {
          // What tells two stops at one address apart: the task's own words, else who is there.
          name: shortName(t.description) || contact.name || contact.company || "",
          reference: t.reference ?? "",
          address: addressLine(a),
          at: pointOf(a),
        },
      ];
    }),
  );
  const task = (url: string | null): ReportTask =>
    taskOf.get(parseHyperlink(url ?? "", "tasks") ?? "") ?? {
      name: url ?? "",
      reference: "",
      address: "",
      at: null,
    };
  const acc = account.results[0] as { timezone: string; language: Locale } | undefined;
  return {
    id: row.id,
    language: negotiateLanguage(acceptLanguage, LOCALES, acc?.language ?? "en"),
    timeZone: acc?.timezone ?? "UTC",
    routes: result.routes.map((r) => {
      const route = routeOf.get(parseHyperlink(r.route ?? "", "routes") ?? "");
      return {
        label: route?.name || (r.route ?? ""),
        start: pointOf(parseJson<StoredAddress | null>(route?.start_address, null)),
        end: pointOf(parseJson<StoredAddress | null>(route?.end_address, null)),
        stops: r.stops.map((s) => ({ ...s, ...task(s.task) })),
        distance_m: r.distance_m,
        duration_s: r.duration_s,
      };
    }),
    unassigned: result.unassigned.map((u) => ({ ...task(u.task), reason: u.reason })),
    distance_m: result.distance_m,
    duration_s: result.duration_s,
  };
}

export async function optimizationReport(
  env: Env,
  p: Principal,
  id: string,
  format: "html" | "pdf",
  acceptLanguage?: string | null,
) {
  const data = await reportData(env.DB, p, id, acceptLanguage);
  const body =
    format === "pdf"
      ? await renderRouteReportPdf(data, await documentFonts(env))
      : renderRouteReportHtml(data);
  return { body, language: data.language };
}
