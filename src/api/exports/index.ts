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
import { pageSchema, paginationQuery } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import { hyperlinkSchema } from "../../http/urls";
import { createExport, getExport, listExports, serializeExport } from "../../services/exports";
import { type ExportKind, fieldNames, METAFIELD_COLUMN } from "../../services/exports/fields";
import { cancelExport, deleteExport } from "../../services/exports/lifecycle";

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
    file: z.string().url().nullable().openapi({
      description:
        "Once `completed`: a signed link to the file, valid `SIGNED_LINK_SECONDS` (900) and never past `file_expires_at` (read the export again for a fresh one); served with Range, ETag and conditional GET, without CORS. Null before completion and once the file expired.",
    }),
    file_expires_at: dateTime()
      .nullable()
      .openapi({ description: "When the file is deleted: `EXPORT_FILE_TTL_DAYS` (7) after completion." }),
    error_message: z.string(),
    created_by: z.string().url().nullable(),
    created_at: dateTime(),
    updated_at: dateTime(),
    completed_at: dateTime().nullable(),
  })
  .openapi("Export");

/**
 * An export's body. `fields` states what the service checks (services/exports `createExport`,
 * with its messages): at least one, each once, each a column of the kind (`fieldNames`) or a
 * metafield column (`metafields.<key>`, for tasks also `order.metafields.<key>`) whose key names a
 * definition of the account (issue 46).
 */
const exportWriteSchema = (kind: ExportKind) =>
  z.object({
    account: hyperlinkSchema("accounts", "The account's URL (required)."),
    fields: z
      .array(z.string())
      .optional()
      .openapi({
        description:
          "Column names: fields, dotted sub-fields (`address.formatted_address`, `contact.phones`, `metafields.<key>`, `assignee.email`, `order.external_id`, ...), each once. A metafield column's key must name a definition. Default: see docs/api.md (Exports).",
        minItems: 1,
        uniqueItems: true,
        items: {
          anyOf: [
            { type: "string", enum: fieldNames(kind) },
            { type: "string", pattern: METAFIELD_COLUMN[kind] },
          ],
        },
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
    request: jsonBody(exportWriteSchema(kind).openapi(`${schemaPrefix}Create`)),
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
  const cancel = createRoute({
    method: "post",
    path: `/${collection}/{id}/cancel/`,
    operationId: `cancel${collection
      .replace(/s$/, "")
      .split("_")
      .map((w) => w[0].toUpperCase() + w.slice(1))
      .join("")}`,
    tags,
    security,
    summary: `Cancel a queued or running ${noun} export`,
    description:
      "The export stops at its next step and its partial file is removed; it reads `failed` with `error_message` `Cancelled.`. An export already `completed` or `failed`: 400.",
    request: { params: uuidParam },
    responses: { 200: jsonResponse(ExportSchema, "The export, failed as cancelled."), ...errorResponses },
  });
  const destroy = createRoute({
    method: "delete",
    path: `/${collection}/{id}/`,
    tags,
    security,
    summary: `Delete a ${noun} export and its file`,
    description: "A queued or running export is cancelled first. The file's links stop working at once.",
    request: { params: uuidParam },
    responses: { 204: { description: "Deleted." }, ...errorResponses },
  });
  return { kind, create, list, retrieve, cancel, destroy };
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
      return c.json(await serializeExport(c.env, renderCtx(c), row), 202);
    });
    defineRoute(app, routes.list, async (c) => {
      const p = requireRole(c, ...DISPATCHERS);
      const page = await listExports(c.env.DB, p, kind, c.req.valid("query"), c.req.url);
      const r = renderCtx(c);
      const results = await Promise.all(page.results.map((x) => serializeExport(c.env, r, x)));
      return c.json({ ...page, results });
    });
    defineRoute(app, routes.retrieve, async (c) => {
      const p = requireRole(c, ...DISPATCHERS);
      return c.json(
        await serializeExport(c.env, renderCtx(c), await getExport(c.env.DB, p, kind, pathId(c))),
      );
    });
    defineRoute(app, routes.cancel, async (c) => {
      const p = requireRole(c, ...DISPATCHERS);
      return c.json(
        await serializeExport(c.env, renderCtx(c), await cancelExport(c.env, p, kind, pathId(c))),
      );
    });
    defineRoute(app, routes.destroy, async (c) => {
      const p = requireRole(c, ...DISPATCHERS);
      await deleteExport(c.env, p, kind, pathId(c));
      return c.body(null, 204);
    });
  }
}
