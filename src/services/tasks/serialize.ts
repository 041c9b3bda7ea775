import { link, type RenderCtx, ts } from "../../http/serialize";
import type { Eta } from "../eta";
import { addressOf, contactOf, formatDuration, parseJson, type TaskRow } from "./types";

/**
 * The Task of interface §2.4. Lives with the service, not the route, because the same
 * rendering goes into events (`task.*` carry the full task, contract §9) and out of the
 * TaskDO, neither of which has a request context.
 *
 * Write-only fields (`contact_address`, `contact_address_external_id`) are never rendered.
 * `routes` appears only with `?expand=routes`: routes do not exist yet, so it is `[]`.
 */
/** The route fields a task renders inline with `?expand=routes`. */
export type InlineRoute = {
  id: string;
  name: string;
  assignee_id: string | null;
  date: string | null;
  state: string;
  objective: string;
  distance_m: number | null;
  duration_s: number | null;
};

/** The routes of some tasks, for `?expand=routes` (one query). */
export async function routesOf(db: D1Database, accountId: string, tasks: TaskRow[]) {
  const ids = [...new Set(tasks.map((t) => t.route_id).filter((x): x is string => !!x))];
  const out = new Map<string, InlineRoute>();
  if (!ids.length) return out;
  const { results } = await db
    .prepare(
      "SELECT id, name, assignee_id, date, state, objective, distance_m, duration_s FROM routes WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))",
    )
    .bind(accountId, JSON.stringify(ids))
    .all<InlineRoute>();
  for (const r of results) out.set(r.id, r);
  return out;
}

export function serializeTask(
  r: RenderCtx,
  t: TaskRow,
  opts: {
    expand?: ReadonlySet<string>;
    routes?: ReadonlyMap<string, InlineRoute>;
    /** The reads' ETAs (services/eta): given, the task gains `eta` and `is_late` (contract §28). */
    etas?: ReadonlyMap<string, Eta>;
  } = {},
) {
  const address = addressOf(t);
  const out: Record<string, unknown> = {
    id: t.id,
    url: link(r, "tasks", t.id),
    account: link(r, "accounts", t.account_id),
    state: t.state,
    category: t.category,
    address: {
      raw_address: address.raw_address,
      formatted_address: address.formatted_address,
      location: address.location,
      geocoded_at: ts(r, t.geocoded_at),
      geocode_failed_at: ts(r, t.geocode_failed_at),
      geocoding_provider: address.geocoding_provider,
    },
    contact: contactOf(t),
    complete_after: ts(r, t.complete_after),
    complete_before: ts(r, t.complete_before),
    description: t.description,
    assignee: link(r, "users", t.assignee_id),
    order: link(r, "orders", t.order_id),
    client: link(r, "clients", t.client_id),
    position: t.position,
    created_by: link(r, "users", t.created_by),
    scheduled_time: ts(r, t.scheduled_time),
    duration: formatDuration(t.duration_seconds),
    metafields: parseJson(t.metafields, {}),
    route: link(r, "routes", t.route_id),
    signers: parseJson(t.signers, []),
    recurrence: link(r, "recurrences", t.recurrence_id),
    calendar_time: parseJson(t.calendar_time, null),
    form_default_values: parseJson(t.form_default_values, {}) ?? {},
    created_at: ts(r, t.created_at),
    updated_at: ts(r, t.updated_at),
    // Computed by reads (contract §28); a write's answer and an event, made before any position
    // is read, say null and false.
    eta: null as string | null,
    is_late: false,
  };
  if (opts.etas) {
    const e = opts.etas.get(t.id);
    out.eta = e && "eta" in e ? ts(r, e.eta) : null;
    out.is_late = !!e && "late" in e && e.late;
  }
  if (opts.expand?.has("routes")) {
    // The task's route inline (its own fields; its task list is the route's URL away).
    const route = t.route_id ? opts.routes?.get(t.route_id) : undefined;
    out.routes = route
      ? [
          {
            id: route.id,
            url: link(r, "routes", route.id),
            name: route.name,
            assignee: link(r, "users", route.assignee_id),
            date: route.date,
            state: route.state,
            objective: route.objective,
            distance_m: route.distance_m,
            duration_s: route.duration_s,
          },
        ]
      : [];
  }
  return out;
}

export type SerializedTask = ReturnType<typeof serializeTask>;

/** Events are rendered once, in UTC, whatever zone the request that caused them asked for. */
export const eventRender = (baseUrl: string): RenderCtx => ({ baseUrl, timeZone: null });
