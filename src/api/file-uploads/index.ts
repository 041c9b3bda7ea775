import { createRoute } from "@hono/zod-openapi";
import { notFound } from "../../http/errors";
import { pathId, requireUser } from "../../http/guards";
import {
  defineRoute,
  errorResponses,
  jsonBody,
  jsonResponse,
  type Router,
  security,
  uuidParam,
} from "../../http/openapi";
import { pageSchema } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import { serializeFileUpload } from "../../services/files/serialize";
import { storageSettings } from "../../services/files/settings";
import { createFileUpload, getFileUpload, listFileUploads } from "../../services/files/uploads";
import { FileUploadBodySchema, FileUploadListQuery, FileUploadSchema } from "./schema";

const tags = ["File uploads"];

export const createFileUploadRoute = createRoute({
  method: "post",
  path: "/file_uploads/",
  tags,
  security,
  summary: "Reserve an upload and get its signed storage form",
  description:
    "Step 1 of 2. Then post `s3_signature.fields` and the file (last part, named `file`) as multipart/form-data " +
    "to `s3_signature.url`; once stored, the upload can be attached with `POST /documents/` or `/signatures/`.",
  request: jsonBody(FileUploadBodySchema),
  responses: { 201: jsonResponse(FileUploadSchema, "The file upload."), ...errorResponses },
});

export const listFileUploadsRoute = createRoute({
  method: "get",
  path: "/file_uploads/",
  tags,
  security,
  summary: "List file uploads (workers: their own)",
  request: { query: FileUploadListQuery },
  responses: {
    200: jsonResponse(pageSchema(FileUploadSchema), "A page of file uploads."),
    ...errorResponses,
  },
});

export const retrieveFileUploadRoute = createRoute({
  method: "get",
  path: "/file_uploads/{id}/",
  tags,
  security,
  summary: "Read a file upload",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(FileUploadSchema, "The file upload."), ...errorResponses },
});

export function mountFileUploads(app: Router) {
  defineRoute(app, createFileUploadRoute, async (c) => {
    const p = requireUser(c);
    const row = await createFileUpload(c.env, p, c.req.valid("json"));
    return c.json(await serializeFileUpload(renderCtx(c), row, storageSettings(c.env)), 201);
  });

  defineRoute(app, listFileUploadsRoute, async (c) => {
    const p = requireUser(c);
    const page = await listFileUploads(c.env.DB, p, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    const s = storageSettings(c.env);
    return c.json({
      ...page,
      results: await Promise.all(page.results.map((row) => serializeFileUpload(r, row, s))),
    });
  });

  defineRoute(app, retrieveFileUploadRoute, async (c) => {
    const p = requireUser(c);
    const row = await getFileUpload(c.env.DB, p, pathId(c));
    if (!row) throw notFound();
    return c.json(await serializeFileUpload(renderCtx(c), row, storageSettings(c.env)));
  });
}
