import { createRoute } from "@hono/zod-openapi";
import { pathId, requireUser } from "../../http/guards";
import type { Ctx } from "../../http/openapi";
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
import {
  FormResponseListQuery,
  FormResponsePatchSchema,
  FormResponseSchema,
  FormResponseWriteSchema,
} from "../../schemas/forms";
import type { Principal } from "../../services/auth/principal";
import {
  completeResponse,
  createResponse,
  deleteResponse,
  getResponse,
  hiddenKeysFor,
  listResponses,
  updateResponse,
} from "../../services/forms/responses";
import { type FormResponseRow, serializeResponse } from "../../services/forms/rows";

const tags = ["Form responses"];

export const createFormResponseRoute = createRoute({
  method: "post",
  path: "/form_responses/",
  tags,
  security,
  summary: "Start a response to a form",
  description:
    "`data` starts from the form's field defaults, overridden by the task's `form_default_values[<form id>]`, then by `data` as sent. " +
    "Workers: for tasks assigned to them only, and not the fields hidden from workers.",
  request: jsonBody(FormResponseWriteSchema),
  responses: { 201: jsonResponse(FormResponseSchema, "The response."), ...errorResponses },
});

export const listFormResponsesRoute = createRoute({
  method: "get",
  path: "/form_responses/",
  tags,
  security,
  summary: "List form responses",
  description: "Workers see the responses of tasks assigned to them, without the fields hidden from workers.",
  request: { query: FormResponseListQuery },
  responses: { 200: jsonResponse(pageSchema(FormResponseSchema), "A page of responses."), ...errorResponses },
});

export const retrieveFormResponseRoute = createRoute({
  method: "get",
  path: "/form_responses/{id}/",
  tags,
  security,
  summary: "Read a form response",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(FormResponseSchema, "The response."), ...errorResponses },
});

function updateFormResponseRouteFor<M extends "patch" | "put">(method: M) {
  return createRoute({
    method,
    path: "/form_responses/{id}/",
    tags,
    security,
    summary: method === "patch" ? "Change a draft response's data" : "Replace a draft response's data",
    description: "A completed response is read-only: 400 `Form response is completed.`",
    request: {
      params: uuidParam,
      ...jsonBody(
        method === "patch" ? FormResponsePatchSchema : FormResponsePatchSchema.openapi("FormResponseUpdate"),
      ),
    },
    responses: { 200: jsonResponse(FormResponseSchema, "The response."), ...errorResponses },
  });
}

export const partialUpdateFormResponseRoute = updateFormResponseRouteFor("patch");
export const updateFormResponseRoute = updateFormResponseRouteFor("put");

export const destroyFormResponseRoute = createRoute({
  method: "delete",
  path: "/form_responses/{id}/",
  tags,
  security,
  summary: "Delete a draft response",
  description: "A completed response: 400 `Form response is completed.`",
  request: { params: uuidParam },
  responses: { 204: { description: "Deleted." }, ...errorResponses },
});

export const completeFormResponseRoute = createRoute({
  method: "post",
  path: "/form_responses/{id}/complete/",
  operationId: "completeFormResponse",
  tags,
  security,
  summary: "Complete a response: required check, snapshot and event in one step",
  description:
    'Missing required fields: 400 `{"data": {"<key>": ["This field is required."]}}` and nothing changes. ' +
    "Sets `state`, `completed_at`, `completed_by` and `schema_snapshot` (the form and its fields now) and emits " +
    "`form_response.completed` to webhooks with `form_response_events: true`, atomically: of two racing completes one succeeds, " +
    "the other gets 400 `Form response is completed.`",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(FormResponseSchema, "The completed response."), ...errorResponses },
});

async function render(c: Ctx, p: Principal, rows: FormResponseRow[]) {
  const hidden = await hiddenKeysFor(c.env.DB, p, rows);
  const r = renderCtx(c);
  return rows.map((row) => serializeResponse(r, row, hidden.get(row.id)));
}

export function mountFormResponses(app: Router) {
  defineRoute(app, createFormResponseRoute, async (c) => {
    const p = requireUser(c);
    const row = await createResponse(c.env, p, c.req.valid("json"));
    return c.json((await render(c, p, [row]))[0], 201);
  });

  defineRoute(app, listFormResponsesRoute, async (c) => {
    const p = requireUser(c);
    const page = await listResponses(c.env.DB, p, c.req.valid("query"), c.req.url);
    return c.json({ ...page, results: await render(c, p, page.results) });
  });

  defineRoute(app, retrieveFormResponseRoute, async (c) => {
    const p = requireUser(c);
    return c.json((await render(c, p, [await getResponse(c.env.DB, p, pathId(c))]))[0]);
  });

  for (const method of ["patch", "put"] as const) {
    const route = method === "patch" ? partialUpdateFormResponseRoute : updateFormResponseRoute;
    defineRoute(app, route, async (c) => {
      const p = requireUser(c);
      const row = await updateResponse(c.env, p, pathId(c), c.req.valid("json"), method);
      return c.json((await render(c, p, [row]))[0]);
    });
  }

  defineRoute(app, destroyFormResponseRoute, async (c) => {
    const p = requireUser(c);
    await deleteResponse(c.env.DB, p, pathId(c));
    return c.body(null, 204);
  });

  defineRoute(app, completeFormResponseRoute, async (c) => {
    const p = requireUser(c);
    const row = await completeResponse(c.env, p, pathId(c), c.get("baseUrl"));
    return c.json((await render(c, p, [row]))[0]);
  });
}
