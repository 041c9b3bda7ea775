import { createRoute, z } from "@hono/zod-openapi";
import { LOCALES } from "../../domain/locales";
import { pathId, requireRole } from "../../http/guards";
import {
  dateTime,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonResponse,
  jsonSchemaRules,
  NOT_BLANK,
  placeholderPattern,
  type Router,
  security,
  uuidParam,
  when,
} from "../../http/openapi";
import { mapPage, pageSchema, paginationQuery } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import { forgetTemplatesOf } from "../../services/notifications/send";
import {
  createNotificationTemplate,
  deleteNotificationTemplate,
  getNotificationTemplate,
  listNotificationTemplates,
  MAX_EMAIL_BODY,
  MAX_SUBJECT,
  NOTIFICATION_CHANNELS,
  NOTIFICATION_EVENTS,
  serializeNotificationTemplate,
  TEMPLATE_PLACEHOLDERS,
  updateNotificationTemplate,
} from "../../services/notifications/templates";
import { POD_OPTIONS } from "../../services/pod";
import { MAX_SMS_LENGTH } from "../../services/sms";

const tags = ["Notification templates"];
/** Messages to the account's customers: for dispatchers (as SMS are). */
const DISPATCHERS = ["admin", "manager", "integration"] as const;
const placeholders = TEMPLATE_PLACEHOLDERS.map((p) => `\`{{${p}}}\``).join(", ");

const podOption = (o: string) =>
  z
    .boolean()
    .nullable()
    .openapi({
      description: `The POD option \`${o}\` for \`task_completed\` e-mails; null: the account's at sending.`,
    });

export const NotificationTemplateSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    account: z.string().url(),
    event: z.enum(NOTIFICATION_EVENTS),
    channel: z.enum(NOTIFICATION_CHANNELS),
    language: z.enum(LOCALES),
    subject: z.string(),
    body: z.string(),
    is_active: z.boolean(),
    ...Object.fromEntries(POD_OPTIONS.map((o) => [o, podOption(o)])),
    created_by: z.string().url().nullable(),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("NotificationTemplate");

// Enums are checked by the service (DRF's "is not a valid choice" message), so the body
// schema takes strings: the document still lists the choices.
const NotificationTemplateWriteSchema = z.object({
  event: z.string().openapi({
    description: `Required. One of ${NOTIFICATION_EVENTS.join(", ")}.`,
    enum: [...NOTIFICATION_EVENTS],
  }),
  channel: z.string().openapi({
    description: `Required. \`sms\` (the task's contact phones) or \`email\` (its e-mails).`,
    enum: [...NOTIFICATION_CHANNELS],
  }),
  language: z
    .string()
    .optional()
    .openapi({
      description: `One of ${LOCALES.join(", ")}; default the account's \`language\`. Times in messages are written in it.`,
      enum: [...LOCALES],
    }),
  subject: z
    .string()
    .optional()
    .openapi({
      description: "E-mail subject (required, not blank, for `email`). Placeholders as in `body`.",
      maxLength: MAX_SUBJECT,
      pattern: placeholderPattern(TEMPLATE_PLACEHOLDERS),
    }),
  body: z.string().openapi({
    description: `Required, not blank. Plain text with placeholders ${placeholders}; an unknown one is 400. SMS: at most 1,600 characters.`,
    minLength: 1,
    maxLength: MAX_EMAIL_BODY,
    pattern: placeholderPattern(TEMPLATE_PLACEHOLDERS, { notBlank: true }),
  }),
  is_active: z.boolean().optional(),
  ...Object.fromEntries(POD_OPTIONS.map((o) => [o, podOption(o).optional()])),
});

/**
 * The service's rules across fields (services/notifications/templates `check`), as JSON Schema:
 * a whole template's, so POST's and PUT's (issue 56). A PATCH is checked merged with the stored
 * template: the body states them only for the fields it names itself (its `channel`, and a
 * `subject` it sends); the stored channel and subject are the stored template's business.
 */
const templateRules = (whole: boolean) =>
  jsonSchemaRules({
    allOf: [
      when(
        { required: ["channel"], properties: { channel: { const: "email" } } },
        { ...(whole ? { required: ["subject"] } : {}), properties: { subject: { pattern: NOT_BLANK } } },
      ),
      when(
        { required: ["channel"], properties: { channel: { const: "sms" } } },
        { properties: { body: { maxLength: MAX_SMS_LENGTH } } },
      ),
    ],
  });
const TEMPLATE_RULES = templateRules(true);

export const createNotificationTemplateRoute = createRoute({
  method: "post",
  path: "/notification_templates/",
  tags,
  security,
  summary: "Create a notification template",
  description:
    "When a task reaches `event` (assigned, transit, completed, failed), each active template of that event sends one message to each of the task's contact phones (`sms`) or e-mails (`email`): once per task, event, template and recipient. `task_completed` e-mails attach the proof of delivery as a PDF.",
  request: jsonBody(NotificationTemplateWriteSchema.openapi("NotificationTemplateCreate", TEMPLATE_RULES)),
  responses: { 201: jsonResponse(NotificationTemplateSchema, "Created."), ...errorResponses },
});

export const listNotificationTemplatesRoute = createRoute({
  method: "get",
  path: "/notification_templates/",
  tags,
  security,
  summary: "List notification templates",
  request: {
    query: z
      .object({
        ...paginationQuery,
        event: z.enum(NOTIFICATION_EVENTS).optional(),
        channel: z.enum(NOTIFICATION_CHANNELS).optional(),
        is_active: z.enum(["true", "false"]).optional(),
      })
      .strict(),
  },
  responses: {
    200: jsonResponse(pageSchema(NotificationTemplateSchema), "A page of templates."),
    ...errorResponses,
  },
});

export const retrieveNotificationTemplateRoute = createRoute({
  method: "get",
  path: "/notification_templates/{id}/",
  tags,
  security,
  summary: "Read a notification template",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(NotificationTemplateSchema, "The template."), ...errorResponses },
});

function updateRouteFor<M extends "patch" | "put">(method: M) {
  return createRoute({
    method,
    path: "/notification_templates/{id}/",
    tags,
    security,
    summary: method === "patch" ? "Change a notification template" : "Replace a notification template",
    description: "Messages already planned are rendered with the template as it is when they are sent.",
    request: {
      params: uuidParam,
      ...jsonBody(
        method === "patch"
          ? NotificationTemplateWriteSchema.partial().openapi(
              "NotificationTemplatePatch",
              templateRules(false),
            )
          : NotificationTemplateWriteSchema.openapi("NotificationTemplateUpdate", TEMPLATE_RULES),
      ),
    },
    responses: { 200: jsonResponse(NotificationTemplateSchema, "The template."), ...errorResponses },
  });
}
export const partialUpdateNotificationTemplateRoute = updateRouteFor("patch");
export const updateNotificationTemplateRoute = updateRouteFor("put");

export const destroyNotificationTemplateRoute = createRoute({
  method: "delete",
  path: "/notification_templates/{id}/",
  tags,
  security,
  summary: "Delete a notification template",
  description: "Its messages not yet sent are dropped; sent ones stay in `/sms/` (and the e-mail provider).",
  request: { params: uuidParam },
  responses: { 204: { description: "Deleted." }, ...errorResponses },
});

export function mountNotificationTemplates(app: Router) {
  defineRoute(app, createNotificationTemplateRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const row = await createNotificationTemplate(c.env.DB, p, c.req.valid("json"));
    forgetTemplatesOf(p.accountId);
    return c.json(serializeNotificationTemplate(renderCtx(c), row), 201);
  });
  defineRoute(app, listNotificationTemplatesRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const page = await listNotificationTemplates(c.env.DB, p, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    return c.json(mapPage(page, (t) => serializeNotificationTemplate(r, t)));
  });
  defineRoute(app, retrieveNotificationTemplateRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    return c.json(
      serializeNotificationTemplate(renderCtx(c), await getNotificationTemplate(c.env.DB, p, pathId(c))),
    );
  });
  for (const method of ["patch", "put"] as const) {
    const route =
      method === "patch" ? partialUpdateNotificationTemplateRoute : updateNotificationTemplateRoute;
    defineRoute(app, route, async (c) => {
      const p = requireRole(c, ...DISPATCHERS);
      const row = await updateNotificationTemplate(c.env.DB, p, pathId(c), c.req.valid("json"), method);
      forgetTemplatesOf(p.accountId);
      return c.json(serializeNotificationTemplate(renderCtx(c), row));
    });
  }
  defineRoute(app, destroyNotificationTemplateRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    await deleteNotificationTemplate(c.env.DB, p, pathId(c));
    forgetTemplatesOf(p.accountId);
    return c.body(null, 204);
  });
}
