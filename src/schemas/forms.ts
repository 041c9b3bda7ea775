import { z } from "@hono/zod-openapi";
import { FORM_FIELD_KEY_RE, FORM_FIELD_TYPES, FORM_LAYOUTS } from "../domain/forms";
import { dateTime } from "../http/openapi";
import { paginationQuery } from "../http/pagination";
import { type Collection, hyperlinkListSchema, hyperlinkSchema } from "../http/urls";

// Forms, their fields and their responses (contract §15). Shapes only: references, defaults of
// the field's type and response data are checked by services/forms against the account.

const link = (collection: Collection, what: string) =>
  hyperlinkSchema(collection, `URL of a ${what} (a bare UUID is accepted too).`);

export const FormSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    account: z.string().url(),
    name: z.string(),
    description: z.string(),
    is_active: z.boolean().openapi({ description: "Inactive forms get no new responses." }),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("Form");

export const FormWriteSchema = z.object({
  name: z.string().trim().min(1).max(200),
  description: z.string().max(10_000).optional(),
  is_active: z.boolean().optional(),
});

export const FormFieldSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    form: z.string().url(),
    key: z.string(),
    label: z.string(),
    field_type: z.enum(FORM_FIELD_TYPES),
    choices: z.array(z.string()),
    default: z.any().openapi({ description: "A value of the field's type, or null." }),
    required: z.boolean(),
    position: z.number(),
    visible_to_worker: z.boolean(),
    collapsed: z.boolean(),
    layout: z.enum(FORM_LAYOUTS),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("FormField");

export const FormFieldWriteSchema = z
  .object({
    form: link("forms", "form of the account"),
    key: z
      .string()
      .regex(
        FORM_FIELD_KEY_RE,
        "Use lower-case letters, digits and underscores, starting with a letter (at most 64).",
      ),
    label: z.string().max(500).optional(),
    field_type: z.enum(FORM_FIELD_TYPES),
    choices: z.array(z.string().min(1).max(200)).max(200).optional().openapi({
      description: "Required and non-empty for `select` and `multiselect`.",
    }),
    default: z.any().optional().openapi({
      description: "A value of the field's type, or null (photo, signature and section fields have none).",
    }),
    required: z
      .boolean()
      .optional()
      .openapi({ description: "Checked when the response is completed. Default false." }),
    position: z
      .number()
      .finite()
      .optional()
      .openapi({ description: "Fields are listed by position. Default: after the last." }),
    visible_to_worker: z.boolean().optional().openapi({ description: "Default true." }),
    collapsed: z.boolean().optional().openapi({ description: "Default false." }),
    layout: z
      .enum(FORM_LAYOUTS)
      .optional()
      .openapi({ description: "Default `list`; meaningful on `section`." }),
  })
  .openapi("FormFieldCreate");

export const FormFieldPatchSchema = FormFieldWriteSchema.omit({ form: true })
  .partial()
  .openapi("FormFieldPatch");

export const FormResponseSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    account: z.string().url(),
    form: z.string().url(),
    task: z.string().url().nullable(),
    data: z.record(z.string(), z.any()),
    state: z.enum(["draft", "completed"]),
    completed_at: dateTime().nullable(),
    completed_by: z.string().url().nullable(),
    schema_snapshot: z
      .object({ form: z.record(z.string(), z.any()), fields: z.array(z.record(z.string(), z.any())) })
      .nullable()
      .openapi({ description: "The form and its fields when the response was completed; null before." }),
    created_by: z.string().url().nullable(),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("FormResponse");

export const FormResponseWriteSchema = z
  .object({
    form: link("forms", "form of the account"),
    task: link("tasks", "task of the account").nullable().optional(),
    data: z.record(z.string(), z.any()).optional().openapi({
      description:
        "Values by field key, validated by the field's type. On create they override the form's defaults and the task's `form_default_values`; PATCH and PUT replace the data (a worker's write keeps the keys hidden from workers).",
    }),
  })
  .openapi("FormResponseCreate");

export const FormResponsePatchSchema = z
  .object({ data: z.record(z.string(), z.any()) })
  .partial()
  .openapi("FormResponsePatch", { description: "`form` and `task` are fixed at creation." });

export const FormListQuery = z
  .object({ ...paginationQuery, is_active: z.enum(["true", "false"]).optional() })
  .strict();
export const FormFieldListQuery = z
  .object({ ...paginationQuery, form: hyperlinkSchema("forms", "Form URL or id.").optional() })
  .strict();
export const FormResponseListQuery = z
  .object({
    ...paginationQuery,
    form: hyperlinkSchema("forms", "Form URL or id.").optional(),
    task: hyperlinkSchema("tasks", "Task URL or id.").optional(),
    task__in: hyperlinkListSchema("tasks", "Tasks: the responses of any of them.").optional(),
    state: z.enum(["draft", "completed"]).optional(),
  })
  .strict();

export type FormWrite = z.infer<typeof FormWriteSchema>;
export type FormFieldWrite = z.infer<typeof FormFieldWriteSchema>;
export type FormFieldPatch = z.infer<typeof FormFieldPatchSchema>;
export type FormResponseWrite = z.infer<typeof FormResponseWriteSchema>;
