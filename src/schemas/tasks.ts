import { z } from "@hono/zod-openapi";
import { CONTACT_PHONE, CONTACT_PHONE_MESSAGE } from "../domain/phones";
import { TASK_STATES } from "../domain/task-state-machine";
import {
  BOOLEAN_TEXT,
  commaList,
  dateTime,
  dateTimeInput,
  dayInput,
  jsonSchemaRules,
  schemaRef,
  when,
} from "../http/openapi";
import { paginationQuery } from "../http/pagination";
import { type Collection, hyperlinkSchema } from "../http/urls";
import { CONTROL_CHARACTERS } from "../services/messaging/email/address";
import { EXPANDS, ORDERINGS, TASK_CATEGORIES } from "../services/tasks/types";
import { RecurrenceShortcutSchema } from "./recurrences";

// Shapes only: these schemas check JSON types. Everything that needs the account (hyperlinks,
// "is this field required", timestamps read in the caller's zone) is checked by the service,
// which answers in the same DRF error shape.

export const TaskCategory = z.enum(TASK_CATEGORIES);
export const TaskStateEnum = z.enum(TASK_STATES);

/**
 * A task body's hyperlink (services/tasks/input.ts `readLink`): null, or `""` as DRF's related
 * fields take it, for none.
 */
const hyperlink = (collection: Collection, what: string) =>
  hyperlinkSchema(collection, `URL of a ${what} (a bare UUID is accepted too).`, { blank: true })
    .nullable()
    .optional();
const timestamp = (description: string) =>
  dateTimeInput({ blank: true })
    .nullable()
    .optional()
    .openapi({
      description: `${description}. ISO 8601 with \`Z\` or an offset; without an offset only when \`Accept-Timezone\` is sent (read in that zone).`,
    });

export const GeoPointSchema = z
  .object({
    type: z.literal("Point"),
    coordinates: z
      .tuple([z.number().min(-180).max(180), z.number().min(-90).max(90)])
      .openapi({ description: "[longitude, latitude] (GeoJSON order), WGS 84." }),
  })
  .openapi("GeoPoint");

export const AddressInputSchema = z
  .object({
    raw_address: z.string().max(1000).optional().openapi({ description: "Free-text address." }),
    location: GeoPointSchema.nullable().optional(),
  })
  .openapi("AddressInput", {
    description:
      "`raw_address` only: geocoded. `location` only: reverse geocoded. Both: stored as sent, not geocoded. " +
      "Other members (formatted_address, geocoded_at, ...) are read-only and ignored.",
    // `addressGiven` below, which the services check (DRF's "Give raw_address or location."):
    // a `raw_address` that is not blank, or a `location` (issue 46).
    anyOf: [
      {
        required: ["raw_address"],
        properties: { raw_address: { type: "string", maxLength: 1000, pattern: "\\S" } },
      },
      { required: ["location"], properties: { location: { $ref: "#/components/schemas/GeoPoint" } } },
    ],
  });

/** An address input names a place (`raw_address` not blank, or `location`); null or absent is no address. */
export const addressGiven = (a: { raw_address?: string; location?: unknown } | null | undefined) =>
  !a || Boolean(a.raw_address?.trim() || a.location);
export const NO_PLACE = "Give raw_address or location.";

/** The refinements of a body's depot addresses (routes, account roles): each names a place. */
export function refineDepots<T extends z.ZodType<{ start_address?: unknown; end_address?: unknown }>>(
  schema: T,
) {
  return schema
    .refine((v) => addressGiven(v.start_address as never), {
      message: NO_PLACE,
      path: ["start_address", "non_field_errors"],
    })
    .refine((v) => addressGiven(v.end_address as never), {
      message: NO_PLACE,
      path: ["end_address", "non_field_errors"],
    });
}

export const AddressSchema = z
  .object({
    raw_address: z.string(),
    formatted_address: z.string().nullable(),
    location: GeoPointSchema.nullable(),
    geocoded_at: dateTime().nullable(),
    geocode_failed_at: dateTime().nullable(),
    geocoding_provider: z.string().nullable(),
  })
  .openapi("Address");

export const ContactSchema = z
  .object({
    name: z.string().max(255).optional(),
    company: z.string().max(255).optional(),
    emails: z
      .array(
        z
          .string()
          .max(254)
          // An address becomes a message's `To` header: a line break would add headers of its own.
          .refine(
            (v) => !CONTROL_CHARACTERS.test(v),
            "E-mail addresses may not contain line breaks or control characters.",
          )
          .openapi({ pattern: `^[^${CONTROL_CHARACTERS.source.slice(1, -1)}]*$` }),
      )
      .max(50)
      .optional(),
    phones: z
      .array(
        z
          .string()
          .max(64)
          // Each becomes a `tel:` link in the apps (issue 52 item 5): the pattern is in the document.
          .regex(CONTACT_PHONE, CONTACT_PHONE_MESSAGE),
      )
      .max(50)
      .optional(),
    notes: z.string().max(10_000).optional(),
  })
  .openapi("Contact");

/** Every writable task field; which are required is the service's business (create vs PATCH). */
export const TaskWriteSchema = z.object({
  account: hyperlink("accounts", "account (the caller's own; required on create)"),
  state: TaskStateEnum.optional().openapi({
    description:
      "On create only: `draft` or `scheduled` (needs a future `scheduled_time`). Otherwise the task starts `assigned` with an assignee, else `unassigned`. Ignored by PUT; 400 in PATCH (use task commands).",
  }),
  category: TaskCategory.optional().openapi({ description: "Required on create." }),
  address: AddressInputSchema.nullable().optional().openapi({
    description: "Required on create unless `contact_address` / `contact_address_external_id` supplies it.",
  }),
  contact: ContactSchema.nullable().optional(),
  complete_after: timestamp("Start of the completion window"),
  complete_before: timestamp("End of the completion window (not before complete_after)"),
  scheduled_time: timestamp("When the task should be executed"),
  description: z.string().max(10_000).optional(),
  assignee: hyperlink("users", "user with a role in the account").openapi({
    description:
      "On create only: the task starts `assigned`. Afterwards assignment changes are task commands.",
  }),
  order: hyperlink("orders", "order"),
  client: hyperlink("clients", "client of the account").openapi({
    description: "Client URL (contract §13), or null.",
  }),
  position: z.number().nullable().optional().openapi({ description: "Lower values come first." }),
  duration: z
    .string()
    .regex(/^\d{1,4}:[0-5]\d:[0-5]\d$/, "Duration has wrong format. Use HH:MM:SS.")
    .nullable()
    .optional()
    .openapi({ description: "Expected duration, `HH:MM:SS`." }),
  metafields: z.record(z.string(), z.any()).nullable().optional(),
  route: hyperlink("routes", "route"),
  signers: z
    .array(z.object({ name: z.string().trim().min(1).max(200) }).strict())
    .max(100)
    .nullable()
    .optional()
    .openapi({
      description:
        'Who may sign, `[{"name": "..."}]`. With the account\'s `feature_signer_name`, a signature\'s `signer_name` must be one of them.',
    }),
  form_default_values: z.record(z.string(), z.any()).nullable().optional(),
  contact_address: hyperlink("contact_addresses", "contact address").openapi({
    description: "Write-only. Supplies `address` and/or `contact` when they are not sent.",
  }),
  contact_address_external_id: z.string().max(255).nullable().optional().openapi({
    description: "Write-only. Like `contact_address`, by the contact address's `external_id`.",
  }),
});

/**
 * What a task body must give to make a task (services/tasks/input.ts `bindRefs`, with DRF's
 * "This field is required."): an `address` (an AddressInput, not null), unless a contact
 * address is named to give it (issue 46).
 */
const PLACE_GIVEN = {
  anyOf: [
    { required: ["address"], properties: { address: schemaRef("AddressInput") } },
    { required: ["contact_address"], properties: { contact_address: { type: "string", minLength: 1 } } },
    {
      required: ["contact_address_external_id"],
      properties: { contact_address_external_id: { type: "string", minLength: 1 } },
    },
  ],
};

/** The states a task may be created in (`creationState`): asked for, or the one it gets anyway. */
export const TASK_CREATE_STATES = ["draft", "scheduled", "unassigned", "assigned"] as const;
const stateIs = (state: string) => ({ required: ["state"], properties: { state: { const: state } } });

/**
 * A new task's rules (services/tasks/input.ts `creationState`, contract §5), as JSON Schema:
 * `assigned` with an `assignee`, `unassigned` without one, `scheduled` with a `scheduled_time`
 * (in the future: a comparison with the clock, which JSON Schema cannot state), and the place.
 */
const TASK_CREATE_RULES = {
  ...PLACE_GIVEN,
  allOf: [
    when(stateIs("assigned"), {
      required: ["assignee"],
      properties: { assignee: { type: "string", minLength: 1 } },
    }),
    when(stateIs("unassigned"), { properties: { assignee: { enum: [null, ""] } } }),
    when(stateIs("scheduled"), {
      required: ["scheduled_time"],
      properties: { scheduled_time: { type: "string", format: "date-time", minLength: 1 } },
    }),
  ],
};

/** `state` on create: the service answers the other states with its own 400 (`MSG.createState`). */
const createState = TaskStateEnum.optional().openapi({
  enum: [...TASK_CREATE_STATES],
  description:
    "`draft`, or `scheduled` (needs a `scheduled_time` in the future). Otherwise the task starts `assigned` with an assignee, else `unassigned` (sending that state is accepted too).",
});

/**
 * PUT /tasks/{id}/: every writable field; those left out take their defaults. `account`,
 * `category` and a place are required as on create (`bindRefs`); `state` is ignored.
 */
export const TaskUpdateSchema = TaskWriteSchema.extend({
  account: hyperlink("accounts", "account (the caller's own)").openapi({ type: "string" }),
}).openapi("TaskUpdate", jsonSchemaRules({ required: ["account", "category"], ...PLACE_GIVEN }));

export type TaskWriteBody = z.infer<typeof TaskWriteSchema>;

/** POST /tasks/: a task body, and optionally the recurrence it starts (contract §20). */
export const TaskCreateSchema = TaskWriteSchema.extend({
  // The service requires `account` and `category` on create (services/tasks, with DRF's
  // "This field is required."); the document says so (issue 46): non-null and `required`.
  account: hyperlink("accounts", "account (the caller's own)").openapi({ type: "string" }),
  state: createState,
  recurrence: RecurrenceShortcutSchema.optional(),
}).openapi("TaskCreate", jsonSchemaRules({ required: ["account", "category"], ...TASK_CREATE_RULES }));

/** A task of an order's `tasks_data`: created (or updated) with the rules of a new task. */
export const ORDER_TASK_RULES = { required: ["category"], ...TASK_CREATE_RULES };
export const orderTaskState = createState;

/**
 * PATCH accepts any `state` value so that it can answer with the pointer to task commands; the
 * document says no value is taken (`not: {}`, JSON Schema 2020-12 §10.2.1.4: the member may not
 * be sent). `address` may not be null (services/tasks/input.ts `readTaskBody`, DRF's "This field
 * may not be null."): zod takes null so that the service answers it beside the other fields'
 * errors; `not` makes the finishing pass write the component itself (issue 56).
 */
export const TaskPatchSchema = TaskWriteSchema.extend({
  state: z
    .any()
    .optional()
    .openapi({ description: "Not writable: 400 pointing to POST /task_commands/.", not: {} }),
  address: AddressInputSchema.nullable()
    .openapi({ description: "Replaces the address; may not be null.", not: { type: "null" } })
    .optional(),
}).openapi("TaskPatch");

export const TaskSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    account: z.string().url(),
    state: TaskStateEnum,
    category: TaskCategory,
    address: AddressSchema,
    contact: z.object({
      name: z.string(),
      company: z.string(),
      emails: z.array(z.string()),
      phones: z.array(z.string()),
      notes: z.string(),
    }),
    complete_after: dateTime().nullable(),
    complete_before: dateTime().nullable(),
    description: z.string(),
    assignee: z.string().url().nullable(),
    order: z.string().url().nullable(),
    client: z.string().url().nullable(),
    position: z.number().nullable(),
    created_by: z.string().url().nullable(),
    scheduled_time: dateTime().nullable(),
    duration: z.string().nullable(),
    metafields: z.record(z.string(), z.any()),
    route: z.string().url().nullable(),
    routes: z.array(z.any()).optional().openapi({
      description: "Only with `?expand=routes`: the task's route inline (a list of one, or empty).",
    }),
    signers: z.any(),
    recurrence: z.string().url().nullable(),
    calendar_time: z.any().nullable(),
    form_default_values: z.record(z.string(), z.any()),
    created_at: dateTime(),
    updated_at: dateTime(),
    eta: dateTime().nullable().optional().openapi({
      description:
        "Read-only, in GET answers and lists (contract §28): for an assigned, unfinished task, when its assignee is expected there: from the assignee's latest position (else its newest command's location, else the route's start) at now, through its unfinished tasks before this one in `position` order, waiting for windows to open and adding visit durations. Null otherwise, and when no start is known. Not in write answers or events (they are made before any position is read).",
    }),
    is_late: z.boolean().optional().openapi({
      description: "Read-only, with `eta`: true when `eta` is after `complete_before` (contract §28).",
    }),
  })
  .openapi("Task");

/** A list filter: text, with the JSON Schema of what the service takes (issue 46). */
const filter = (description: string, rules: Record<string, unknown> = {}) =>
  z
    .string()
    .optional()
    .openapi({ description, ...rules });
const timeFilter = (description: string) =>
  dateTimeInput()
    .optional()
    .openapi({
      description: `${description} ISO 8601, with \`Z\` or an offset (without one: in \`Accept-Timezone\`).`,
    });
/** An object's URL or bare UUID (`hyperlinkPattern`); empty is malformed, as any other filter. */
const idFilter = (collection: Collection, description: string) =>
  hyperlinkSchema(collection, description).optional();
const boolFilter = (description: string) => filter(description, { enum: [...BOOLEAN_TEXT] });

/**
 * A task metafield filter, in either of its two spellings (the key as metafield keys are
 * spelled): `metafields__<key>` (contract §12, DRF's lookup style) and `metafields[<key>]`, the
 * OpenAPI 3.1 `deepObject` style of a `metafields` object parameter, which is how a generated
 * client sends `{metafields: {<key>: <value>}}` (OpenAPI cannot name a parameter by a prefix).
 */
export const METAFIELD_FILTER_RE = /^metafields(?:__([a-z][a-z0-9_]{0,63})|\[([a-z][a-z0-9_]{0,63})\])$/;

/** The metafield key a query parameter filters on, or null when it is no metafield filter. */
export const metafieldFilterKey = (param: string): string | null => {
  const m = METAFIELD_FILTER_RE.exec(param);
  return m ? (m[1] ?? m[2]) : null;
};
/** zod's code of an issue a refinement adds (named once, apart from the API's error codes). */
export const CUSTOM_ISSUE = "custom" as const;

const TASK_LIST_FILTERS = {
  ...paginationQuery,
  state: filter("Task state; several separated by commas.", commaList(TASK_STATES)),
  assignee: idFilter("users", "User URL or UUID."),
  category: filter("pick_up, drop_off or service; several separated by commas.", commaList(TASK_CATEGORIES)),
  complete_after__gte: timeFilter("complete_after at or after this time."),
  complete_before__lte: timeFilter("complete_before at or before this time."),
  day: dayInput().optional().openapi({
    description:
      "`YYYY-MM-DD`: the tasks on that day, in the request's time zone (`Accept-Timezone`; UTC without it): those whose window (`complete_after`..`complete_before`, either end alone counting as a point) meets the day, or whose `scheduled_time` falls in it. A dispatch board's day in one filter.",
  }),
  undated: boolFilter(
    "`true`: only tasks with neither window nor `scheduled_time` (what `day` never lists); `false`: only tasks with one.",
  ),
  order: idFilter("orders", "Order URL or UUID."),
  contact_address: idFilter("contact_addresses", "Contact address URL or UUID."),
  contact_address__external_id: filter("External id of the contact address the task was linked with."),
  task_import: idFilter("imports", "Task import UUID (or URL)."),
  address__geocoded_at: timeFilter("Exact geocoding time."),
  address__geocoded_at__gte: timeFilter("Geocoded at or after."),
  address__geocoded_at__lte: timeFilter("Geocoded at or before."),
  address__geocoded_at__isnull: boolFilter("`true`: not geocoded (yet); `false`: geocoded."),
  address__geocode_failed_at: timeFilter("Exact time of the last geocoding failure."),
  address__geocode_failed_at__gte: timeFilter("Geocoding failed at or after."),
  address__geocode_failed_at__lte: timeFilter("Geocoding failed at or before."),
  address__geocode_failed_at__isnull: boolFilter("`false`: geocoding failed; `true`: it did not."),
  updated_at__gt: timeFilter("Updated strictly after."),
  updated_at__gte: timeFilter("Updated at or after."),
  updated_at_delay_latest: boolFilter(
    "`true`: leave out tasks updated in the last UPDATED_AT_SETTLE_SECONDS (default 5 s), so a sync by `updated_at__gt` + `ordering=updated_at` never skips a late commit.",
  ),
  ordering: filter(
    "created_at (default), updated_at, complete_after, complete_before, position; `-` for descending. Tasks without a value come last either way.",
    { enum: ORDERINGS.flatMap((f) => [f, `-${f}`]) },
  ),
  expand: filter("`routes`: the task's routes inline.", commaList(EXPANDS)),
  client: idFilter("clients", "Client URL or UUID."),
  route: idFilter("routes", "Route URL or UUID."),
  // Documentation of the deepObject spelling; the values arrive as `metafields[<key>]` keys
  // (the catchall below), never under this name.
  metafields: z
    .record(z.string(), z.string())
    .optional()
    .openapi({
      param: { style: "deepObject", explode: true },
      description:
        "Metafield filters: `metafields[<key>]=<value>` (OpenAPI `deepObject`), or the same as `metafields__<key>=<value>` " +
        "(contract §12). Several may be given; all must hold. A value matches the task's value as text (`true`/`false` for " +
        "booleans, a number however it is written, a list when one of its items matches).",
      example: { door_code: "4711" },
    }),
};

export const TaskListQuery = z
  .object(TASK_LIST_FILTERS)
  // `metafields__<key>` / `metafields[<key>]` name keys the schema cannot list; any other
  // unknown parameter is still refused, as `.strict()` would.
  .catchall(z.any())
  .superRefine((q, ctx) => {
    for (const key of Object.keys(q)) {
      if (!(key in TASK_LIST_FILTERS) && metafieldFilterKey(key) === null) {
        ctx.addIssue({ code: CUSTOM_ISSUE, message: "Unknown query parameter.", path: [key] });
      }
    }
  });

const TaskListQueryShape = z.object(TASK_LIST_FILTERS);
export type TaskListQueryInput = z.infer<typeof TaskListQueryShape> & {
  [key: `metafields__${string}` | `metafields[${string}]`]: string | undefined;
};

export const TaskExpandQuery = z
  .object({ expand: filter("`routes`: the task's routes inline.", commaList(EXPANDS)) })
  .strict();
