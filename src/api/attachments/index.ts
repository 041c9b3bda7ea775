/**
 * `/documents/` and `/signatures/` (interface §2.2, §2.3, §4.3): one set of routes,
 * mounted once per kind, over one service (services/files/attachments.ts).
 */
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
import { mapPage, pageSchema } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import {
  type AttachmentInput,
  batchDeleteAttachments,
  createAttachment,
  deleteAttachment,
  getAttachment,
  listAttachments,
  updateAttachment,
} from "../../services/files/attachments";
import { serializeAttachment } from "../../services/files/serialize";
import { type AttachmentKind, COLLECTION_OF } from "../../services/files/types";
import { attachmentSchemas } from "./schema";

/** The route configs of one kind (its operationIds: `createDocument`, `listSignatures`, ...). */
function attachmentRoutes(kind: AttachmentKind) {
  const base = `/${COLLECTION_OF[kind]}/`;
  const Title = kind === "document" ? "Document" : "Signature";
  const tags = [`${Title}s`];
  const s = attachmentSchemas(kind);

  return {
    create: createRoute({
      method: "post",
      path: base,
      tags,
      security,
      summary: `Attach an uploaded file to a task as a ${kind}`,
      description:
        "Step 2 of 2. The uploaded object is copied to the " +
        `${kind}'s own key; \`mimetype\` is detected from its bytes; \`thumbnail\` follows asynchronously for images. ` +
        `Emits \`${kind}.created\` (with the task inline).`,
      request: jsonBody(s.create),
      responses: { 201: jsonResponse(s.item, `The ${kind}.`), ...errorResponses },
    }),
    list: createRoute({
      method: "get",
      path: base,
      tags,
      security,
      summary: `List ${kind}s`,
      description: `Workers see the ${kind}s of their own tasks that are \`visible_to_worker\`.`,
      request: { query: s.listQuery },
      responses: { 200: jsonResponse(pageSchema(s.item), `A page of ${kind}s.`), ...errorResponses },
    }),
    batchDelete: createRoute({
      method: "post",
      path: `${base}batch_delete/`,
      tags,
      security,
      summary: `Delete several ${kind}s, all or nothing`,
      description:
        `Every id must name a ${kind} the caller sees and may delete; otherwise 400 ` +
        '`{"ids": {"<index>": ["..."]}}` and nothing is deleted. Stored files go too. ' +
        `Emits \`${kind}.deleted\` per ${kind}.`,
      request: jsonBody(s.batchDelete),
      responses: { 204: { description: "Deleted." }, ...errorResponses },
    }),
    retrieve: createRoute({
      method: "get",
      path: `${base}{id}/`,
      tags,
      security,
      summary: `Read a ${kind}`,
      request: { params: uuidParam },
      responses: { 200: jsonResponse(s.item, `The ${kind}.`), ...errorResponses },
    }),
    partialUpdate: createRoute({
      method: "patch",
      path: `${base}{id}/`,
      tags,
      security,
      summary: `Change a ${kind}'s description or visibility`,
      description: "Dispatchers (admin, manager, integration), or the user who created it.",
      request: { params: uuidParam, ...jsonBody(s.patch) },
      responses: { 200: jsonResponse(s.item, `The ${kind}.`), ...errorResponses },
    }),
    destroy: createRoute({
      method: "delete",
      path: `${base}{id}/`,
      tags,
      security,
      summary: `Delete a ${kind} and its stored file`,
      description: `Dispatchers, or the user who created it. Emits \`${kind}.deleted\`.`,
      request: { params: uuidParam },
      responses: { 204: { description: "Deleted." }, ...errorResponses },
    }),
  };
}

export const documentRoutes = attachmentRoutes("document");
export const signatureRoutes = attachmentRoutes("signature");

function mountKind(app: Router, kind: AttachmentKind, routes: typeof documentRoutes) {
  defineRoute(app, routes.create, async (c) => {
    const p = requireUser(c);
    // The schema of the kind validated it; `signer_name` is in the signatures' schema only.
    const body = c.req.valid("json") as AttachmentInput;
    const row = await createAttachment(c.env, p, kind, body, { baseUrl: c.get("baseUrl") });
    return c.json(serializeAttachment(renderCtx(c), row), 201);
  });

  defineRoute(app, routes.list, async (c) => {
    const p = requireUser(c);
    const page = await listAttachments(c.env.DB, p, kind, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    return c.json(mapPage(page, (row) => serializeAttachment(r, row)));
  });

  defineRoute(app, routes.batchDelete, async (c) => {
    const p = requireUser(c);
    await batchDeleteAttachments(c.env, p, kind, c.req.valid("json").ids, { baseUrl: c.get("baseUrl") });
    return c.body(null, 204);
  });

  defineRoute(app, routes.retrieve, async (c) => {
    const p = requireUser(c);
    const row = await getAttachment(c.env.DB, p, kind, pathId(c));
    if (!row) throw notFound();
    return c.json(serializeAttachment(renderCtx(c), row));
  });

  defineRoute(app, routes.partialUpdate, async (c) => {
    const p = requireUser(c);
    const row = await updateAttachment(c.env.DB, p, kind, pathId(c), c.req.valid("json"));
    return c.json(serializeAttachment(renderCtx(c), row));
  });

  defineRoute(app, routes.destroy, async (c) => {
    const p = requireUser(c);
    await deleteAttachment(c.env, p, kind, pathId(c), { baseUrl: c.get("baseUrl") });
    return c.body(null, 204);
  });
}

export function mountAttachments(app: Router) {
  mountKind(app, "document", documentRoutes);
  mountKind(app, "signature", signatureRoutes);
}
