/**
 * The two rewrites of the schemas zod-to-openapi generates that the document's finishing pass
 * (openapi-document.ts) makes, both for tools that would read them wrong as generated: tuples get
 * `items` and a fixed length beside `prefixItems`, and a nullable use of a component is written
 * `anyOf: [$ref, null]` (issue 46).
 */

type Json = any;

/**
 * JSON Schema 2020-12's `prefixItems` with `items` + a fixed length beside it, which every tool
 * reads: a tool that knows `prefixItems` checks each position's own rules (a GeoJSON point's
 * longitude in -180..180, its latitude in -90..90: issue 46), one that does not sees an array
 * of the common type and length (2020-12 §10.3.1.2: `items` then covers no position).
 */
export function plainTuples(node: Json) {
  if (Array.isArray(node)) {
    for (const item of node) plainTuples(item);
    return;
  }
  if (!node || typeof node !== "object") return;
  if (Array.isArray(node.prefixItems) && node.items === undefined) {
    const types = [...new Set(node.prefixItems.map((s: Json) => s.type))];
    node.items = types.length === 1 && types[0] ? { type: types[0] } : {};
    node.minItems = node.prefixItems.length;
    node.maxItems = node.prefixItems.length;
  }
  for (const value of Object.values(node)) plainTuples(value);
}

/**
 * A nullable use of a component (`GeoPointSchema.nullable()`): zod-to-openapi writes it as
 * `allOf: [{$ref}, {type: ["object", "null"], ...metadata}]`, which says "the component, and an
 * object or null", i.e. never null. Written as JSON Schema means it: `anyOf: [{$ref}, {type:
 * "null"}]`, the metadata (a description) beside it. A use marked `not: {type: "null"}` (zod takes
 * null there, the service refuses it with its own message) is the component: `allOf: [{$ref}]`.
 */
export function nullableRefs(node: Json) {
  if (Array.isArray(node)) {
    for (const item of node) nullableRefs(item);
    return;
  }
  if (!node || typeof node !== "object") return;
  const parts = node.allOf;
  if (
    Array.isArray(parts) &&
    parts.length === 2 &&
    typeof parts[0]?.$ref === "string" &&
    Object.keys(parts[0]).length === 1 &&
    Array.isArray(parts[1]?.type) &&
    parts[1].type.includes("null")
  ) {
    const { type: _, not, ...metadata } = parts[1];
    delete node.allOf;
    if (not?.type === "null" && Object.keys(not).length === 1) {
      // Taken as null by zod, refused by the service (its own message): the component, not null.
      node.allOf = Object.keys(metadata).length ? [parts[0], metadata] : [parts[0]];
    } else Object.assign(node, metadata, { anyOf: [parts[0], { type: "null" }] }, not ? { not } : {});
  }
  for (const value of Object.values(node)) nullableRefs(value);
}

const url = (about: string) => ({ type: "string", format: "uri", description: about });
const time = (about: string) => ({ type: "string", format: "date-time", description: about });

/** The `data` of the running day's events (contract §28), as the webhooks' part of the document shows it. */
export const PART_FIVE_EVENTS = {
  "task.late": {
    schema: {
      type: "object",
      required: ["task", "eta", "complete_before"],
      properties: {
        task: url("The task's URL."),
        eta: time("The ETA that is after the window's end (contract §28)."),
        complete_before: time("The end of the task's window."),
      },
    },
    about:
      "A task became late: its ETA is after its `complete_before` (contract §28). Made once per task and window, within 10 s of the position or command that made it late, or by the next cron run (each minute) when time alone did",
  },
  "task.auto_assign_failed": {
    schema: {
      type: "object",
      required: ["task", "reason"],
      properties: {
        task: url("The task's URL."),
        reason: {
          type: "string",
          enum: ["unreachable", "capacity", "time_window", "shift"],
          description:
            "Why it fits no on-duty worker's route (contract §16's reasons, the first that holds).",
        },
      },
    },
    about:
      "With `auto_assign` `insert` (contract §29), a task that became unassigned fits no on-duty worker's route today: it stays unassigned. Made once per change of the task",
  },
  "worker.duty_changed": {
    schema: {
      type: "object",
      required: ["user", "on_duty", "time"],
      properties: {
        user: url("The worker's user URL."),
        on_duty: { type: "boolean" },
        time: time("When the duty changed."),
      },
    },
    about: 'A worker went on or off duty (`PATCH /account_roles/{id}/ {"on_duty"}`, contract §28)',
  },
} as const;
