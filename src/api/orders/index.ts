import { createRoute } from "@hono/zod-openapi";
import { type FieldErrors, ValidationError } from "../../http/errors";
import { pathId, requireRole } from "../../http/guards";
import {
  batchValidationError,
  type Ctx,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonResponse,
  oneOrMany,
  type Router,
  security,
  uuidParam,
  zodToFieldErrors,
} from "../../http/openapi";
import { pageSchema } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import {
  OrderCreateSchema,
  OrderExpandQuery,
  OrderListQuery,
  OrderPatchBody,
  OrderPatchSchema,
  OrderPostBody,
  OrderSchema,
  type OrderWriteBody,
  OrderWriteSchema,
} from "../../schemas/orders";
import { RecurrenceShortcutSchema } from "../../schemas/recurrences";
import {
  deleteOrder,
  getOrder,
  listOrders,
  orderLimits,
  renderOrder,
  serializeOrder,
  tooManyOrders,
  tooManyTasks,
  writeOrders,
} from "../../services/orders";
import { createRecurringOrder } from "../../services/recurrences";

const tags = ["Orders"];
const DISPATCHERS = ["admin", "manager", "integration"] as const;

/**
 * zod reports an error inside tasks_data[1] under the key "1"; DRF (contract §3) answers a list
 * of nested objects aligned with the input, `{}` for the valid ones.
 */
export function alignLists(errors: FieldErrors, input: unknown): FieldErrors {
  const out: FieldErrors = {};
  for (const [key, e] of Object.entries(errors)) {
    const value = input && typeof input === "object" ? (input as Record<string, unknown>)[key] : undefined;
    if (Array.isArray(e) || typeof e !== "object") {
      out[key] = e;
    } else if (Array.isArray(value) && Object.keys(e).every((k) => /^\d+$/.test(k))) {
      out[key] = value.map((item, i) => {
        const sub = (e as FieldErrors)[String(i)];
        return sub && !Array.isArray(sub)
          ? alignLists(sub as FieldErrors, item)
          : sub
            ? { non_field_errors: sub as string[] }
            : {};
      }) as FieldErrors[];
    } else {
      out[key] = alignLists(e as FieldErrors, value);
    }
  }
  return out;
}

/**
 * Parses one order or an array of them. Counts come first (contract §10: past a limit, 400
 * naming it, and nothing is stored), then each item's shape; errors of an array body are an
 * array aligned with it.
 */
export function parseOrderBodies(
  raw: unknown,
  limits: { orders: number; tasks: number },
  allowArray: boolean,
) {
  const isArray = allowArray && Array.isArray(raw);
  const items: unknown[] = isArray ? (raw as unknown[]) : [raw];
  if (isArray && items.length > limits.orders) {
    throw new ValidationError({ non_field_errors: [tooManyOrders(items.length, limits.orders)] });
  }
  if (isArray && items.length === 0)
    throw new ValidationError({ non_field_errors: ["This list may not be empty."] });
  const errors: FieldErrors[] = [];
  const bodies: OrderWriteBody[] = [];
  for (const item of items) {
    const tasks = (item as { tasks_data?: unknown } | null)?.tasks_data;
    if (Array.isArray(tasks) && tasks.length > limits.tasks) {
      errors.push({ tasks_data: [tooManyTasks(tasks.length, limits.tasks)] });
      continue;
    }
    const r = OrderWriteSchema.safeParse(item);
    if (r.success) {
      errors.push({});
      bodies.push(r.data);
    } else errors.push(alignLists(zodToFieldErrors(r.error.issues, "json", item), item));
  }
  if (errors.some((e) => Object.keys(e).length)) throw new ValidationError(isArray ? errors : errors[0]);
  return { bodies, isArray };
}

const expandsDocuments = (expand: string | undefined) => {
  if (expand === undefined) return false;
  const items = expand
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = items.filter((s) => s !== "documents");
  if (bad.length || !items.length) {
    throw new ValidationError({
      expand: [`Select a valid choice. ${bad.join(", ") || '""'} is not one of the available choices.`],
    });
  }
  return true;
};

const writeOpts = (c: Ctx) => ({ zone: c.get("timeZone"), baseUrl: c.get("baseUrl") });

/**
 * `recurrence` of one posted order (contract §20), shape-checked; null without one. An array
 * body may not carry it (each item would start its own recurrence, and an array answers orders,
 * not first occurrences): 400 on those items.
 */
function recurrenceOf(raw: unknown) {
  const has = (x: unknown) =>
    x !== null && typeof x === "object" && (x as { recurrence?: unknown }).recurrence != null;
  if (Array.isArray(raw)) {
    if (raw.some(has)) {
      throw new ValidationError(
        raw.map(
          (x): FieldErrors =>
            has(x) ? { recurrence: ["A recurrence is made from a single order, not from an array."] } : {},
        ),
      );
    }
    return null;
  }
  if (!has(raw)) return null;
  const r = RecurrenceShortcutSchema.safeParse((raw as { recurrence: unknown }).recurrence);
  if (!r.success) {
    throw new ValidationError({
      recurrence: zodToFieldErrors(r.error.issues, "json", (raw as { recurrence: unknown }).recurrence),
    });
  }
  return r.data;
}

export const createOrderRoute = createRoute({
  method: "post",
  path: "/orders/",
  tags,
  security,
  summary: "Create or update (by external_id) one order or an array of orders, with their tasks",
  description:
    "Each order and its tasks_data are stored in one transaction. An array answers an array in input order; " +
    "if any item is invalid nothing is stored and the errors come back as an array aligned with the input. " +
    "Limits: 100 orders per request, 500 tasks per order (400 naming the limit). " +
    "Status: 201 when an order was created (for an array: any), 200 when every order already existed (an update).",
  request: jsonBody(OrderPostBody),
  responses: {
    200: jsonResponse(
      oneOrMany(OrderSchema, "The orders in input order: an array when an array was sent."),
      "Every order already existed (its `external_id`): updated.",
    ),
    201: jsonResponse(
      oneOrMany(OrderSchema, "The orders in input order: an array when an array was sent."),
      "Created (for an array: at least one order was new).",
    ),
    ...errorResponses,
    400: batchValidationError,
  },
});

export const listOrdersRoute = createRoute({
  method: "get",
  path: "/orders/",
  tags,
  security,
  summary: "List orders",
  request: { query: OrderListQuery },
  responses: { 200: jsonResponse(pageSchema(OrderSchema), "A page of orders."), ...errorResponses },
});

export const retrieveOrderRoute = createRoute({
  method: "get",
  path: "/orders/{id}/",
  tags,
  security,
  summary: "Read an order",
  request: { params: uuidParam, query: OrderExpandQuery },
  responses: { 200: jsonResponse(OrderSchema, "The order."), ...errorResponses },
});

export const partialUpdateOrderRoute = createRoute({
  method: "patch",
  path: "/orders/{id}/",
  tags,
  security,
  summary: "Change an order",
  description: "The fields sent replace the stored ones; tasks_data, when sent, works as in an upsert.",
  request: { params: uuidParam, ...jsonBody(OrderPatchBody) },
  responses: { 200: jsonResponse(OrderSchema, "The order."), ...errorResponses },
});

export const destroyOrderRoute = createRoute({
  method: "delete",
  path: "/orders/{id}/",
  tags,
  security,
  summary: "Delete an order",
  description: "Its tasks are kept and lose their `order` link.",
  request: { params: uuidParam },
  responses: { 204: { description: "Deleted." }, ...errorResponses },
});

export function mountOrders(app: Router) {
  // Named by the bodies' `oneOf` / `$ref` (validated by the handlers, see OrderPostBody).
  app.openAPIRegistry.register("OrderCreate", OrderCreateSchema);
  app.openAPIRegistry.register("OrderPatch", OrderPatchSchema);

  defineRoute(app, createOrderRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const raw = c.req.valid("json");
    const recurring = recurrenceOf(raw);
    if (recurring) {
      const { bodies } = parseOrderBodies(raw, orderLimits(c.env), false);
      const result = await createRecurringOrder(
        c.env,
        p,
        { ...bodies[0], recurrence: recurring },
        writeOpts(c),
      );
      return c.json(renderOrder(renderCtx(c), result), 201);
    }
    const { bodies, isArray } = parseOrderBodies(raw, orderLimits(c.env), true);
    const results = await writeOrders(c.env, p, bodies, {
      isArray,
      target: { kind: "post" },
      ...writeOpts(c),
    });
    const r = renderCtx(c);
    const status = results.some((x) => x.created) ? 201 : 200;
    const out = results.map((x) => renderOrder(r, x));
    return c.json(isArray ? out : out[0], status);
  });

  defineRoute(app, listOrdersRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const q = c.req.valid("query");
    const expand = expandsDocuments(q.expand);
    const { page, rel } = await listOrders(c.env.DB, p, q, c.req.url);
    const r = renderCtx(c);
    return c.json({
      ...page,
      results: page.results.map((o) =>
        serializeOrder(r, o, {
          taskIds: rel.taskIds.get(o.id)!,
          documents: rel.documents.get(o.id)!,
          expandDocuments: expand,
        }),
      ),
    });
  });

  defineRoute(app, retrieveOrderRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const expand = expandsDocuments(c.req.valid("query").expand);
    return c.json(renderOrder(renderCtx(c), await getOrder(c.env.DB, p, pathId(c)), expand));
  });

  defineRoute(app, partialUpdateOrderRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const id = pathId(c);
    const { bodies } = parseOrderBodies(c.req.valid("json"), orderLimits(c.env), false);
    const [result] = await writeOrders(c.env, p, bodies, {
      isArray: false,
      target: { kind: "patch", id },
      ...writeOpts(c),
    });
    return c.json(renderOrder(renderCtx(c), result));
  });

  defineRoute(app, destroyOrderRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    await deleteOrder(c.env, p, pathId(c), { baseUrl: c.get("baseUrl") });
    return c.body(null, 204);
  });
}
