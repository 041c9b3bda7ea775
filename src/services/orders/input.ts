/** Reading an order body into drafts, and the limits of a request (contract §7, §10). */
import { type FieldErrors, ValidationError } from "../../http/errors";
import type { OrderWriteBody } from "../../schemas/orders";
import {
  addError,
  hasErrors,
  MSG,
  type RefSet,
  readLink,
  readTaskBody,
  type TaskDraft,
} from "../tasks/input";
import type { TaskValues } from "../tasks/types";
import type { DocumentRow, OrderRow } from "./serialize";

export const DEFAULT_MAX_ORDERS = 100;
export const DEFAULT_MAX_TASKS = 500;
export const TASKS_PER_STATEMENT = 100;

export type Limits = { orders: number; tasks: number };

/** Contract §10 limits; settings `MAX_ORDERS_PER_REQUEST` / `MAX_TASKS_PER_ORDER` override them. */
export function orderLimits(env: Env): Limits {
  const vars = env as unknown as Record<string, string | undefined>;
  const num = (v: string | undefined, d: number) => (Number(v) > 0 ? Math.floor(Number(v)) : d);
  return {
    orders: num(vars.MAX_ORDERS_PER_REQUEST, DEFAULT_MAX_ORDERS),
    tasks: num(vars.MAX_TASKS_PER_ORDER, DEFAULT_MAX_TASKS),
  };
}

export const tooManyOrders = (n: number, max: number) =>
  `Too many orders in one request: ${n}. The limit is ${max} orders per request.`;
export const tooManyTasks = (n: number, max: number) =>
  `Too many tasks in one order: ${n}. The limit is ${max} tasks per order (tasks_data).`;

export type OrderCols = {
  external_id: string | null;
  reference: string;
  description: string;
  client_id: string | null;
  metafields: string;
  orderer: string | null;
  assignee_id: string | null;
  auto_assign: number;
};

export type OrderDraft = {
  /** The id a new order gets (imports); else a fresh one. */
  id?: string;
  errors: FieldErrors;
  cols: Partial<OrderCols>;
  assignee?: string | null;
  client?: string | null;
  accountId?: string | null;
  tasks?: TaskDraft[];
  taskValues?: TaskValues[];
};

export type OrderTarget = { kind: "post" } | { kind: "patch"; id: string };
export type OrderWriteResult = {
  row: OrderRow;
  created: boolean;
  taskIds: string[];
  documents: DocumentRow[];
};

export function readOrderBody(
  body: OrderWriteBody,
  target: OrderTarget,
  zone: string | null,
  refs: RefSet,
): OrderDraft {
  const d: OrderDraft = { errors: {}, cols: {} };
  if (target.kind === "post" && (body.account === undefined || body.account === null)) {
    addError(d.errors, "account", MSG.required);
  }
  d.accountId = readLink(d.errors, "account", body.account, "accounts");
  if (body.external_id !== undefined) d.cols.external_id = body.external_id || null;
  if (body.reference !== undefined) d.cols.reference = body.reference;
  if (body.description !== undefined) d.cols.description = body.description;
  d.client = readLink(d.errors, "client", body.client, "clients", refs.clients);
  if (body.metafields !== undefined) d.cols.metafields = JSON.stringify(body.metafields ?? {});
  if (body.orderer !== undefined)
    d.cols.orderer = body.orderer ? JSON.stringify({ name: body.orderer.name }) : null;
  d.assignee = readLink(d.errors, "assignee", body.assignee, "users", refs.users);
  if (body.auto_assign !== undefined) d.cols.auto_assign = body.auto_assign ? 1 : 0;
  if (body.tasks_data !== undefined) {
    d.tasks = body.tasks_data.map((t) => readTaskBody(t, { mode: "order", zone, refs }));
  }
  return d;
}

/** The order's errors with its tasks' errors aligned under `tasks_data` (DRF's nested list shape). */
export function errorsOf(d: OrderDraft): FieldErrors | null {
  const e: FieldErrors = { ...d.errors };
  if (d.tasks?.some((t) => hasErrors(t.errors))) e.tasks_data = d.tasks.map((t) => t.errors);
  return hasErrors(e) ? e : null;
}

export function throwIfInvalid(drafts: OrderDraft[], isArray: boolean) {
  const all = drafts.map(errorsOf);
  if (all.every((e) => e === null)) return;
  throw new ValidationError(isArray ? all.map((e) => e ?? {}) : all[0]!);
}
