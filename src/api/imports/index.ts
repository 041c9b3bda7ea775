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
import { hyperlinkSchema } from "../../http/urls";
import { createImport, getImport, listImports, serializeImport } from "../../services/imports";
import { IMPORT_KINDS } from "../../services/imports/columns";
import { cancelImport } from "../../services/imports/lifecycle";

const tags = ["Imports"];
const DISPATCHERS = ["admin", "manager", "integration"] as const;
const KINDS = IMPORT_KINDS as unknown as readonly ["orders", "tasks", "contact_addresses"];

export const ImportSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    account: z.string().url(),
    kind: z.enum(KINDS),
    file: z.string().url().openapi({ description: "The file upload the rows come from." }),
    dry_run: z.boolean(),
    columns: z.array(z.string()).openapi({ description: "The header row." }),
    state: z.enum(["queued", "running", "completed", "failed"]),
    total_rows: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Data rows in the file; null until read." }),
    processed_rows: z.number().int(),
    created: z
      .number()
      .int()
      .openapi({ description: "Objects of the import's kind created (orders for `orders`)." }),
    updated: z.number().int().openapi({ description: "Objects updated (upserts by external_id)." }),
    failed: z.number().int().openapi({ description: "Rows not applied." }),
    errors: z
      .array(z.object({ row: z.number().int(), field: z.string().nullable(), message: z.string() }))
      .openapi({
        description: "The first 1,000 row errors; `row` as a spreadsheet numbers it (the header is 1).",
      }),
    error_message: z.string().openapi({ description: "Why a `failed` import applied nothing (or stopped)." }),
    created_by: z.string().url().nullable(),
    created_at: dateTime(),
    updated_at: dateTime(),
    completed_at: dateTime().nullable(),
  })
  .openapi("Import");

const ImportWriteSchema = z
  .object({
    kind: z.enum(KINDS),
    file: hyperlinkSchema(
      "file_uploads",
      "The URL (or id) of a file upload of the account whose file is uploaded: a UTF-8 CSV file. It names the " +
        "same kind of object as `file_upload` of documents and signatures; the wire name `file` is fixed by the " +
        "interface (contract §21) and kept for existing clients.",
    ),
    dry_run: z.boolean().optional().openapi({ description: "Validate every row, apply nothing." }),
  })
  .openapi("ImportCreate");

export const createImportRoute = createRoute({
  method: "post",
  path: "/imports/",
  tags,
  security,
  summary: "Import orders, tasks or contact addresses from a CSV file (applied from a queue)",
  description:
    "The header is read at once: unknown columns are a 400 before any row is applied. 202 with `state` `queued`; poll it for `running`, `completed` (counts and row errors) or `failed` (`error_message`).",
  request: jsonBody(ImportWriteSchema),
  responses: { 202: jsonResponse(ImportSchema, "Queued."), ...errorResponses },
});

export const listImportsRoute = createRoute({
  method: "get",
  path: "/imports/",
  tags,
  security,
  summary: "List imports, newest first",
  request: { query: z.object(paginationQuery).strict() },
  responses: { 200: jsonResponse(pageSchema(ImportSchema), "A page."), ...errorResponses },
});

export const retrieveImportRoute = createRoute({
  method: "get",
  path: "/imports/{id}/",
  tags,
  security,
  summary: "Read an import",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(ImportSchema, "The import."), ...errorResponses },
});

export const cancelImportRoute = createRoute({
  method: "post",
  path: "/imports/{id}/cancel/",
  operationId: "cancelImport",
  tags,
  security,
  summary: "Cancel a queued or running import",
  description:
    "Rows already applied stay applied (each once); no further row is. The import reads `failed` with `error_message` `Cancelled.`. An import already `completed` or `failed`: 400.",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(ImportSchema, "The import, failed as cancelled."), ...errorResponses },
});

export function mountImports(app: Router) {
  defineRoute(app, createImportRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const row = await createImport(c.env, p, c.req.valid("json"), {
      zone: c.get("timeZone"),
      baseUrl: c.get("baseUrl"),
    });
    return c.json(serializeImport(renderCtx(c), row), 202);
  });
  defineRoute(app, listImportsRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const page = await listImports(c.env.DB, p, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    return c.json(mapPage(page, (x) => serializeImport(r, x)));
  });
  defineRoute(app, retrieveImportRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    return c.json(serializeImport(renderCtx(c), await getImport(c.env.DB, p, pathId(c))));
  });
  defineRoute(app, cancelImportRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    return c.json(serializeImport(renderCtx(c), await cancelImport(c.env, p, pathId(c))));
  });
}
