import { z } from "@hono/zod-openapi";
import { TASK_ACTIONS } from "../../domain/task-state-machine";
import { dateTime, dateTimeInput, jsonSchemaRules, when } from "../../http/openapi";
import { hyperlinkSchema } from "../../http/urls";
import { TaskCommandInputSchema } from "../../services/task-commands";

export const TaskCommandSchema = TaskCommandInputSchema.extend({
  id: z.string().uuid(),
  url: z.string().url(),
  account: z.string().url(),
  user: z
    .string()
    .url()
    .nullable()
    .openapi({ description: "Issuing user; null for moves made by the system (scheduled time)." }),
  assignee: z.string().url().nullable(),
  task_data: z.record(z.string(), z.any()).openapi({ description: "`{}` when not sent." }),
  notes: z.string().openapi({ description: '`""` when not sent.' }),
  state: z.enum(["pending", "accepted", "rejected"]),
  error_message: z
    .string()
    .openapi({ description: "Empty when accepted; names the state and the action for an invalid move." }),
  accepted_at: dateTime().nullable(),
  rejected_at: dateTime().nullable(),
  created_at: dateTime(),
  updated_at: dateTime(),
}).openapi("TaskCommand");

const actionIs = (actions: string[]) => ({ required: ["action"], properties: { action: { enum: actions } } });

/**
 * One command of POST /task_commands/ (alone or in a batch), with the rules the service checks
 * per action (services/task-commands: "This field is required for <action>."), as JSON Schema.
 */
export const TaskCommandCreateSchema = TaskCommandInputSchema.openapi(
  "TaskCommandCreate",
  jsonSchemaRules({
    allOf: [
      when(actionIs(["assign", "reassign"]), {
        required: ["assignee"],
        properties: { assignee: { type: "string" } },
      }),
      when(actionIs(["update"]), { required: ["task_data"], properties: { task_data: { type: "object" } } }),
    ],
  }),
);

/** JSON Schema `oneOf` (see `oneOrMany`): an object and an array never both match. */
export const TaskCommandBodySchema = z
  .union([
    TaskCommandCreateSchema,
    z.array(TaskCommandCreateSchema).max(500, "Too many commands: at most 500 per request."),
  ])
  .openapi(
    { description: "One command, or an array (a batch) of up to 500, for one or several tasks." },
    { unionPreferredType: "oneOf" },
  );

export const TaskCommandListQuery = z
  .object({
    task: hyperlinkSchema("tasks", "Task URL or id.").optional(),
    state: z.enum(["pending", "accepted", "rejected"]).optional(),
    action: z.enum(TASK_ACTIONS).optional(),
    user: hyperlinkSchema("users", "User URL or id.").optional(),
    created_at__gte: dateTimeInput()
      .optional()
      .openapi({ description: "Commands made at or after this time." }),
  })
  .strict();

export { serializeCommand } from "../../services/task-commands/serialize";
