import { createRoute } from "@hono/zod-openapi";
import { pathId, requireRole, requireUser } from "../../http/guards";
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
import { FormListQuery, FormSchema, FormWriteSchema } from "../../schemas/forms";
import { createForm, deleteForm, getForm, listForms, updateForm } from "../../services/forms/forms";
import { serializeForm } from "../../services/forms/rows";

const tags = ["Forms"];
/** Dispatchers design forms; every member reads them (workers fill them in). */
export const FORM_DESIGNERS = ["admin", "manager", "integration"] as const;

export const createFormRoute = createRoute({
  method: "post",
  path: "/forms/",
  tags,
  security,
  summary: "Create a form (dispatchers)",
  request: jsonBody(FormWriteSchema.openapi("FormCreate")),
  responses: { 201: jsonResponse(FormSchema, "The form."), ...errorResponses },
});

export const listFormsRoute = createRoute({
  method: "get",
  path: "/forms/",
  tags,
  security,
  summary: "List forms",
  request: { query: FormListQuery },
  responses: { 200: jsonResponse(pageSchema(FormSchema), "A page of forms."), ...errorResponses },
});

export const retrieveFormRoute = createRoute({
  method: "get",
  path: "/forms/{id}/",
  tags,
  security,
  summary: "Read a form",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(FormSchema, "The form."), ...errorResponses },
});

function updateFormRouteFor<M extends "patch" | "put">(method: M) {
  return createRoute({
    method,
    path: "/forms/{id}/",
    tags,
    security,
    summary: method === "patch" ? "Change a form (dispatchers)" : "Replace a form (dispatchers)",
    description: "Completed responses keep reading from their snapshot, whatever changes here.",
    request: {
      params: uuidParam,
      ...jsonBody(
        method === "patch"
          ? FormWriteSchema.partial().openapi("FormPatch")
          : FormWriteSchema.openapi("FormUpdate"),
      ),
    },
    responses: { 200: jsonResponse(FormSchema, "The form."), ...errorResponses },
  });
}

export const partialUpdateFormRoute = updateFormRouteFor("patch");
export const updateFormRoute = updateFormRouteFor("put");

export const destroyFormRoute = createRoute({
  method: "delete",
  path: "/forms/{id}/",
  tags,
  security,
  summary: "Delete a form, its fields and its draft responses (dispatchers)",
  description: "Completed responses stay, readable from their `schema_snapshot`.",
  request: { params: uuidParam },
  responses: { 204: { description: "Deleted." }, ...errorResponses },
});

export function mountForms(app: Router) {
  defineRoute(app, createFormRoute, async (c) => {
    const p = requireRole(c, ...FORM_DESIGNERS);
    return c.json(serializeForm(renderCtx(c), await createForm(c.env.DB, p, c.req.valid("json"))), 201);
  });

  defineRoute(app, listFormsRoute, async (c) => {
    const p = requireUser(c);
    const page = await listForms(c.env.DB, p, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    return c.json(mapPage(page, (f) => serializeForm(r, f)));
  });

  defineRoute(app, retrieveFormRoute, async (c) => {
    const p = requireUser(c);
    return c.json(serializeForm(renderCtx(c), await getForm(c.env.DB, p, pathId(c))));
  });

  for (const method of ["patch", "put"] as const) {
    const route = method === "patch" ? partialUpdateFormRoute : updateFormRoute;
    defineRoute(app, route, async (c) => {
      const p = requireRole(c, ...FORM_DESIGNERS);
      const row = await updateForm(c.env.DB, p, pathId(c), c.req.valid("json"), method);
      return c.json(serializeForm(renderCtx(c), row));
    });
  }

  defineRoute(app, destroyFormRoute, async (c) => {
    const p = requireRole(c, ...FORM_DESIGNERS);
    await deleteForm(c.env.DB, p, pathId(c));
    return c.body(null, 204);
  });
}
