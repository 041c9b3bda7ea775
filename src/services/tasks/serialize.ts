import { link, type RenderCtx, ts } from "../../http/serialize";
import { addressOf, contactOf, formatDuration, parseJson, type TaskRow } from "./types";

/**
 * The Task of interface §2.4. Lives with the service, not the route, because the same
 * rendering goes into events (`task.*` carry the full task, contract §9) and out of the
 * TaskDO, neither of which has a request context.
 *
 * Write-only fields (`contact_address`, `contact_address_external_id`) are never rendered.
 * `routes` appears only with `?expand=routes`: routes do not exist yet, so it is `[]`.
 */
export function serializeTask(r: RenderCtx, t: TaskRow, opts: { expand?: ReadonlySet<string> } = {}) {
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
  };
  if (opts.expand?.has("routes")) {
    // Routes are not a resource yet; once they are, this renders the task's route inline.
    out.routes = [];
  }
  return out;
}

export type SerializedTask = ReturnType<typeof serializeTask>;

/** Events are rendered once, in UTC, whatever zone the request that caused them asked for. */
export const eventRender = (baseUrl: string): RenderCtx => ({ baseUrl, timeZone: null });
