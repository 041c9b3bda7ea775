import { z } from "@hono/zod-openapi";
import { commaList, dateTime, jsonSchemaRules, when } from "../http/openapi";
import { paginationQuery } from "../http/pagination";
import { hyperlinkSchema } from "../http/urls";
import { RecurrenceShortcutSchema } from "./recurrences";
import { ORDER_TASK_RULES, orderTaskState, TaskWriteSchema } from "./tasks";

/** A task inside an order's `tasks_data`: a task body without `account` and `order`. */
export const OrderTaskDataSchema = TaskWriteSchema.omit({ account: true, order: true })
  .extend({ state: orderTaskState })
  .openapi(
    "OrderTaskData",
    jsonSchemaRules({
      description:
        "Validated like a task creation (category and address required). On an update of the order, entry i updates " +
        "the order's i-th task (its state and assignee are left alone: those are task commands).",
      ...ORDER_TASK_RULES,
    }),
  );

export const OrderWriteSchema = z.object({
  account: hyperlinkSchema("accounts", "The caller's account; required on create.", { blank: true })
    .nullable()
    .optional(),
  external_id: z
    .string()
    .max(255)
    .nullable()
    .optional()
    .openapi({
      description:
        "Unique in the account. POST with an existing external_id updates that order: the fields sent replace the stored ones; " +
        "tasks_data[i] updates the i-th task, extra entries add tasks, and tasks past the end that have not started are cancelled.",
    }),
  reference: z.string().max(255).optional(),
  description: z.string().max(10_000).optional(),
  client: hyperlinkSchema("clients", "Client URL (contract §13), or null.", { blank: true })
    .nullable()
    .optional(),
  metafields: z
    .record(z.string(), z.any())
    .nullable()
    .optional()
    .openapi({ description: "Validated against the metafields defined with `applies_to: orders`." }),
  orderer: z
    .object({ name: z.string().max(255) })
    .nullable()
    .optional(),
  assignee: hyperlinkSchema("users", "User URL: the order's new tasks start assigned to this user.", {
    blank: true,
  })
    .nullable()
    .optional(),
  auto_assign: z.boolean().optional().openapi({
    description: "New tasks go to the active worker with the fewest open tasks (ties: earliest role).",
  }),
  tasks_data: z
    .array(OrderTaskDataSchema)
    .optional()
    .openapi({ description: "At most 500 tasks per order." }),
});

export type OrderWriteBody = z.infer<typeof OrderWriteSchema>;

/** One order of POST /orders/: optionally the recurrence it starts (contract §20; not in arrays). */
export const OrderCreateSchema = OrderWriteSchema.extend({
  // Required and not null on POST (services/orders/input.ts, DRF's "This field is required.").
  account: hyperlinkSchema("accounts", "The caller's account.", { blank: true })
    .nullable()
    .optional()
    .openapi({ type: "string" }),
  recurrence: RecurrenceShortcutSchema.nullable()
    .openapi({
      description:
        "Makes a recurrence with the rest of the body as its template; the answer is its first occurrence. Only when one order is sent: in an array it is 400 on that item (null is none).",
    })
    .optional(),
}).openapi(
  "OrderCreate",
  jsonSchemaRules({
    required: ["account"],
    // Every occurrence would update the one order (services/recurrences `templateErrors`).
    allOf: [
      when(
        { required: ["recurrence"], properties: { recurrence: { type: "object" } } },
        { properties: { external_id: { enum: [null, ""] } } },
      ),
    ],
  }),
);

/** PATCH /orders/{id}/: the fields sent replace the stored ones. */
export const OrderPatchSchema = OrderWriteSchema.openapi("OrderPatch");

export const OrderSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    account: z.string().url(),
    external_id: z.string().nullable(),
    reference: z.string(),
    client: z.string().url().nullable(),
    metafields: z.record(z.string(), z.any()),
    orderer: z.object({ name: z.string() }).nullable(),
    tasks: z.array(z.string().url()),
    assignee: z.string().url().nullable(),
    auto_assign: z.boolean(),
    created_by: z.string().url().nullable(),
    created_at: dateTime(),
    updated_at: dateTime(),
    description: z.string(),
    recurrence: z.string().url().nullable(),
    calendar_time: z.any().nullable().openapi({
      description:
        "For an order a recurrence made: the occurrence's time, as its tasks have it (contract §20).",
    }),
    documents: z
      .array(z.any())
      .openapi({ description: "Document URLs; the documents inline with `?expand=documents`." }),
  })
  .openapi("Order");

/**
 * The documented body of POST /orders/: one order or an array of up to 100. Validated by the
 * handler, not by the route's hook, so that errors of an array body come back as an array
 * aligned with the input (contract §3).
 */
export const OrderPostBody = z.any().openapi({
  description:
    "One order, or an array of 1 to 100 orders (each applied atomically; nothing is stored if any item is invalid). `recurrence` only with a single order.",
  oneOf: [
    { $ref: "#/components/schemas/OrderCreate" },
    {
      type: "array",
      // A recurrence is made from a single order (api/orders `recurrenceOf`): in an array, null at most.
      items: {
        allOf: [{ $ref: "#/components/schemas/OrderCreate" }],
        properties: { recurrence: { type: "null" } },
      },
      minItems: 1,
      maxItems: 100,
    },
  ],
} as never);

/** The documented body of PATCH /orders/{id}/, validated by the handler like POST's (aligned `tasks_data` errors). */
export const OrderPatchBody = z.any().openapi({ $ref: "#/components/schemas/OrderPatch" } as never);

export const OrderListQuery = z
  .object({
    ...paginationQuery,
    external_id: z.string().optional().openapi({ description: "Exact external id." }),
    client: hyperlinkSchema("clients", "Client URL or UUID.").optional(),
    expand: z
      .string()
      .optional()
      .openapi({ description: "`documents`: the order's documents inline.", ...commaList(["documents"]) }),
  })
  .strict();

export const OrderExpandQuery = z
  .object({
    expand: z
      .string()
      .optional()
      .openapi({ description: "`documents`: the order's documents inline.", ...commaList(["documents"]) }),
  })
  .strict();
