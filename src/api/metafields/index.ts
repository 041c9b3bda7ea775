import { createRoute, z } from "@hono/zod-openapi";
import {
  METAFIELD_KEY_RE,
  METAFIELD_SOURCES,
  METAFIELD_TARGETS,
  METAFIELD_VALUE_TYPES,
} from "../../domain/metafields";
import { pathId, requireRole, requireUser } from "../../http/guards";
import {
  dateTime,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonResponse,
  jsonSchemaRules,
  type Router,
  security,
  uuidParam,
  when,
} from "../../http/openapi";
import { mapPage, pageSchema, paginationQuery } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import {
  createMetafield,
  deleteMetafield,
  getMetafield,
  listMetafields,
  serializeMetafield,
  updateMetafield,
} from "../../services/metafields";

const tags = ["Metafields"];
/** Admins and managers define metafields; everyone reads them (contract §12). */
const DEFINERS = ["admin", "manager"] as const;

export const MetafieldSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    account: z.string().url(),
    key: z.string(),
    label: z.string(),
    applies_to: z.enum(METAFIELD_TARGETS),
    value_type: z.enum(METAFIELD_VALUE_TYPES),
    choices: z.array(z.string()),
    is_required_before_complete: z.boolean(),
    is_editable_by_worker: z.boolean(),
    hide_when_empty: z.boolean(),
    source: z.enum(METAFIELD_SOURCES),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("Metafield");

const MetafieldWriteSchema = z.object({
  key: z
    .string()
    .regex(
      METAFIELD_KEY_RE,
      "Use lower-case letters, digits and underscores, starting with a letter (at most 64).",
    ),
  label: z.string().max(200).optional(),
  applies_to: z.enum(METAFIELD_TARGETS),
  value_type: z.enum(METAFIELD_VALUE_TYPES),
  choices: z
    .array(z.string().min(1).max(200))
    .max(500)
    .optional()
    .openapi({ description: "Required and non-empty for `select` and `multiselect`." }),
  is_required_before_complete: z
    .boolean()
    .optional()
    .openapi({ description: "Tasks only: `complete` is rejected while the value is empty." }),
  is_editable_by_worker: z.boolean().optional().openapi({ description: "Default true." }),
  hide_when_empty: z
    .boolean()
    .optional()
    .openapi({ description: "A presentation hint (POD, public pages)." }),
  source: z
    .enum(METAFIELD_SOURCES)
    .optional()
    .openapi({ description: "`contact_address`: copied from the task's contact address at creation." }),
});

/**
 * A definition's rules across fields (services/metafields `shapeErrors`, with its messages), as
 * JSON Schema: choices for `select`/`multiselect`; required before completion and copied from a
 * contact address only for task metafields (contract §12).
 */
const DEFINITION_RULES = jsonSchemaRules({
  allOf: [
    when(
      { required: ["value_type"], properties: { value_type: { enum: ["select", "multiselect"] } } },
      { required: ["choices"], properties: { choices: { minItems: 1 } } },
    ),
    when({ required: ["applies_to"], properties: { applies_to: { const: "tasks" } } }, undefined, {
      properties: { is_required_before_complete: { const: false }, source: { const: "manual" } },
    }),
  ],
});

/**
 * The same rules for a PATCH, as far as the body states them: a PATCH is checked merged with the
 * stored definition, so only what the body itself names (its `value_type`, its `applies_to`)
 * decides here; the rest is the stored definition's (issue 56).
 */
const PATCH_DEFINITION_RULES = jsonSchemaRules({
  allOf: [
    when(
      { required: ["value_type"], properties: { value_type: { enum: ["select", "multiselect"] } } },
      { properties: { choices: { minItems: 1 } } },
    ),
    when(
      { required: ["applies_to"], properties: { applies_to: { not: { const: "tasks" } } } },
      {
        properties: { is_required_before_complete: { const: false }, source: { const: "manual" } },
      },
    ),
  ],
});

export const createMetafieldRoute = createRoute({
  method: "post",
  path: "/metafields/",
  tags,
  security,
  summary: "Define a metafield (admins, managers)",
  description: "`key` is unique per account and `applies_to` (400 on `key`).",
  request: jsonBody(MetafieldWriteSchema.openapi("MetafieldCreate", DEFINITION_RULES)),
  responses: { 201: jsonResponse(MetafieldSchema, "The definition."), ...errorResponses },
});

export const listMetafieldsRoute = createRoute({
  method: "get",
  path: "/metafields/",
  tags,
  security,
  summary: "List metafield definitions",
  request: {
    query: z.object({ ...paginationQuery, applies_to: z.enum(METAFIELD_TARGETS).optional() }).strict(),
  },
  responses: { 200: jsonResponse(pageSchema(MetafieldSchema), "A page of definitions."), ...errorResponses },
});

export const retrieveMetafieldRoute = createRoute({
  method: "get",
  path: "/metafields/{id}/",
  tags,
  security,
  summary: "Read a metafield definition",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(MetafieldSchema, "The definition."), ...errorResponses },
});

function updateMetafieldRouteFor<M extends "patch" | "put">(method: M) {
  return createRoute({
    method,
    path: "/metafields/{id}/",
    tags,
    security,
    summary: method === "patch" ? "Change a metafield definition" : "Replace a metafield definition",
    description: "Stored values are not re-validated; the next write of each object is.",
    request: {
      params: uuidParam,
      ...jsonBody(
        method === "patch"
          ? MetafieldWriteSchema.partial().openapi("MetafieldPatch", PATCH_DEFINITION_RULES)
          : MetafieldWriteSchema.openapi("MetafieldUpdate", DEFINITION_RULES),
      ),
    },
    responses: { 200: jsonResponse(MetafieldSchema, "The definition."), ...errorResponses },
  });
}

export const partialUpdateMetafieldRoute = updateMetafieldRouteFor("patch");
export const updateMetafieldRoute = updateMetafieldRouteFor("put");

export const destroyMetafieldRoute = createRoute({
  method: "delete",
  path: "/metafields/{id}/",
  tags,
  security,
  summary: "Delete a metafield definition",
  description: "Stored values stay and are no longer validated.",
  request: { params: uuidParam },
  responses: { 204: { description: "Deleted." }, ...errorResponses },
});

export function mountMetafields(app: Router) {
  defineRoute(app, createMetafieldRoute, async (c) => {
    const p = requireRole(c, ...DEFINERS);
    return c.json(
      serializeMetafield(renderCtx(c), await createMetafield(c.env.DB, p, c.req.valid("json"))),
      201,
    );
  });

  defineRoute(app, listMetafieldsRoute, async (c) => {
    const p = requireUser(c);
    const page = await listMetafields(c.env.DB, p, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    return c.json(mapPage(page, (m) => serializeMetafield(r, m)));
  });

  defineRoute(app, retrieveMetafieldRoute, async (c) => {
    const p = requireUser(c);
    return c.json(serializeMetafield(renderCtx(c), await getMetafield(c.env.DB, p, pathId(c))));
  });

  for (const method of ["patch", "put"] as const) {
    const route = method === "patch" ? partialUpdateMetafieldRoute : updateMetafieldRoute;
    defineRoute(app, route, async (c) => {
      const p = requireRole(c, ...DEFINERS);
      const row = await updateMetafield(c.env.DB, p, pathId(c), c.req.valid("json"), method);
      return c.json(serializeMetafield(renderCtx(c), row));
    });
  }

  defineRoute(app, destroyMetafieldRoute, async (c) => {
    const p = requireRole(c, ...DEFINERS);
    await deleteMetafield(c.env.DB, p, pathId(c));
    return c.body(null, 204);
  });
}
