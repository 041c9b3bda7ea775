import { createRoute, z } from "@hono/zod-openapi";
import { pathId, requireRole } from "../../http/guards";
import {
  dateTime,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonResponse,
  type Router,
  security,
  uuidParam,
} from "../../http/openapi";
import { mapPage, pageSchema, paginationQuery } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import { createExport, getExport, listExports, serializeExport } from "../../services/exports";
import type { ExportKind } from "../../services/exports/fields";

const DISPATCHERS = ["admin", "manager", "integration"] as const;

export const ExportSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    account: z.string().url(),
    format: z.enum(["csv", "jsonl"]),
    fields: z.array(z.string()).openapi({ description: "The columns, in order." }),
    filters: z.record(z.string(), z.string()),
    state: z.enum(["queued", "running", "completed", "failed"]),
    row_count: z.number().int().openapi({
      description: "Rows written so far: grows while `running` (progress), final when `completed`.",
    }),
    file: z
      .string()
      .url()
      .nullable()
      .openapi({ description: "The file (served with Range, ETag and conditional GET), once `completed`." }),
    error_message: z.string(),
    created_by: z.string().url().nullable(),
    created_at: dateTime(),
    updated_at: dateTime(),
    completed_at: dateTime().nullable(),
  })
  .openapi("Export");

const ExportWriteSchema = z.object({
  account: z.string().openapi({ description: "The account's URL (required)." }),
  fields: z.array(z.string()).optional().openapi({
    description:
      "Column names: fields, dotted sub-fields (`address.formatted_address`, `contact.phones`, `metafields.<key>`, `assignee.email`, `order.external_id`, ...). Default: see the README (Exports).",
  }),
  filters: z
    .record(z.string(), z.any())
    .optional()
    .openapi({
      description:
        "The list's query parameters, values as strings (numbers and booleans are accepted) (tasks: those of " +
        "`GET /tasks/` but `cursor`, `page_size`, `expand`). Metafield filters as in the list: `metafields__<key>` or " +
        '`metafields[<key>]` keys, or one `"metafields": {"<key>": "<value>"}` object (the list\'s `deepObject` ' +
        "parameter), kept as `metafields__<key>`. Contact addresses: `external_id`.",
    }),
  format: z.enum(["csv", "jsonl"]).optional().openapi({ description: "Default `csv` (RFC 4180)." }),
});

function exportRoutes(kind: ExportKind, collection: string, tag: string, noun: string, schemaPrefix: string) {
  const tags = [tag];
  const create = createRoute({
    method: "post",
    path: `/${collection}/`,
    tags,
    security,
    summary: `Export ${noun} to a file (written from a queue)`,
    description:
      "202 with `state` `queued`; poll it for `running` (with `row_count` growing), `completed` (`file`) or `failed` (`error_message`). Unknown `fields` or `filters`: 400 naming them.",
    request: jsonBody(ExportWriteSchema.openapi(`${schemaPrefix}Create`)),
    responses: { 202: jsonResponse(ExportSchema, "Queued."), ...errorResponses },
  });
  const list = createRoute({
    method: "get",
    path: `/${collection}/`,
    tags,
    security,
    summary: `List ${noun} exports, newest first`,
    request: { query: z.object(paginationQuery).strict() },
    responses: { 200: jsonResponse(pageSchema(ExportSchema), "A page."), ...errorResponses },
  });
  const retrieve = createRoute({
    method: "get",
    path: `/${collection}/{id}/`,
    tags,
    security,
    summary: `Read a ${noun} export`,
    request: { params: uuidParam },
    responses: { 200: jsonResponse(ExportSchema, "The export."), ...errorResponses },
  });
  return { kind, create, list, retrieve };
}

export const taskExportRoutes = exportRoutes("tasks", "task_exports", "Exports", "tasks", "TaskExport");
export const contactAddressExportRoutes = exportRoutes(
  "contact_addresses",
  "contact_address_exports",
  "Exports",
  "contact addresses",
  "ContactAddressExport",
);

export function mountExports(app: Router) {
  for (const routes of [taskExportRoutes, contactAddressExportRoutes]) {
    const { kind } = routes;
    defineRoute(app, routes.create, async (c) => {
      const p = requireRole(c, ...DISPATCHERS);
      const row = await createExport(c.env, p, kind, c.req.valid("json"), {
        zone: c.get("timeZone"),
        baseUrl: c.get("baseUrl"),
      });
      return c.json(serializeExport(renderCtx(c), row), 202);
    });
    defineRoute(app, routes.list, async (c) => {
      const p = requireRole(c, ...DISPATCHERS);
      const page = await listExports(c.env.DB, p, kind, c.req.valid("query"), c.req.url);
      const r = renderCtx(c);
      return c.json(mapPage(page, (x) => serializeExport(r, x)));
    });
    defineRoute(app, routes.retrieve, async (c) => {
      const p = requireRole(c, ...DISPATCHERS);
      return c.json(serializeExport(renderCtx(c), await getExport(c.env.DB, p, kind, pathId(c))));
    });
  }
}
