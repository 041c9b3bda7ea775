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
import {
  FormFieldListQuery,
  FormFieldPatchSchema,
  FormFieldSchema,
  FormFieldWriteSchema,
} from "../../schemas/forms";
import { createField, deleteField, getField, listFields, updateField } from "../../services/forms/fields";
import { serializeField } from "../../services/forms/rows";
import { FORM_DESIGNERS } from "../forms";

const tags = ["Form fields"];

export const createFormFieldRoute = createRoute({
  method: "post",
  path: "/form_fields/",
  tags,
  security,
  summary: "Add a field to a form (dispatchers)",
  description:
    "`key` is unique in the form (400 on `key`); a form holds at most `MAX_FORM_FIELDS` (500) fields (400 on `form`). `default` must be a value of the field's type.",
  request: jsonBody(FormFieldWriteSchema),
  responses: { 201: jsonResponse(FormFieldSchema, "The field."), ...errorResponses },
});

export const listFormFieldsRoute = createRoute({
  method: "get",
  path: "/form_fields/",
  tags,
  security,
  summary: "List form fields, by position",
  request: { query: FormFieldListQuery },
  responses: { 200: jsonResponse(pageSchema(FormFieldSchema), "A page of fields."), ...errorResponses },
});

export const retrieveFormFieldRoute = createRoute({
  method: "get",
  path: "/form_fields/{id}/",
  tags,
  security,
  summary: "Read a form field",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(FormFieldSchema, "The field."), ...errorResponses },
});

function updateFormFieldRouteFor<M extends "patch" | "put">(method: M) {
  return createRoute({
    method,
    path: "/form_fields/{id}/",
    tags,
    security,
    summary: method === "patch" ? "Change a form field (dispatchers)" : "Replace a form field (dispatchers)",
    description: "`form` cannot change. Completed responses keep the field as their snapshot has it.",
    request: {
      params: uuidParam,
      ...jsonBody(
        method === "patch"
          ? FormFieldPatchSchema
          : FormFieldWriteSchema.omit({ form: true }).openapi("FormFieldUpdate"),
      ),
    },
    responses: { 200: jsonResponse(FormFieldSchema, "The field."), ...errorResponses },
  });
}

export const partialUpdateFormFieldRoute = updateFormFieldRouteFor("patch");
export const updateFormFieldRoute = updateFormFieldRouteFor("put");

export const destroyFormFieldRoute = createRoute({
  method: "delete",
  path: "/form_fields/{id}/",
  tags,
  security,
  summary: "Delete a form field (dispatchers)",
  description:
    "Stored values of draft responses stay until the next write; completed responses keep their snapshot.",
  request: { params: uuidParam },
  responses: { 204: { description: "Deleted." }, ...errorResponses },
});

export function mountFormFields(app: Router) {
  defineRoute(app, createFormFieldRoute, async (c) => {
    const p = requireRole(c, ...FORM_DESIGNERS);
    return c.json(serializeField(renderCtx(c), await createField(c.env, p, c.req.valid("json"))), 201);
  });

  defineRoute(app, listFormFieldsRoute, async (c) => {
    const p = requireUser(c);
    const page = await listFields(c.env.DB, p, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    return c.json(mapPage(page, (f) => serializeField(r, f)));
  });

  defineRoute(app, retrieveFormFieldRoute, async (c) => {
    const p = requireUser(c);
    return c.json(serializeField(renderCtx(c), await getField(c.env.DB, p, pathId(c))));
  });

  for (const method of ["patch", "put"] as const) {
    const route = method === "patch" ? partialUpdateFormFieldRoute : updateFormFieldRoute;
    defineRoute(app, route, async (c) => {
      const p = requireRole(c, ...FORM_DESIGNERS);
      const row = await updateField(c.env.DB, p, pathId(c), c.req.valid("json"), method);
      return c.json(serializeField(renderCtx(c), row));
    });
  }

  defineRoute(app, destroyFormFieldRoute, async (c) => {
    const p = requireRole(c, ...FORM_DESIGNERS);
    await deleteField(c.env.DB, p, pathId(c));
    return c.body(null, 204);
  });
}
