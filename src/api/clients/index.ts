import { createRoute, z } from "@hono/zod-openapi";
import { pathId, requireRole } from "../../http/guards";
import {
  dateTime,
  defineRoute,
  emailAddress,
  errorResponses,
  jsonBody,
  jsonResponse,
  NOT_BLANK,
  type Router,
  security,
  uuidParam,
} from "../../http/openapi";
import { mapPage, pageSchema, paginationQuery } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import {
  deleteClient,
  getClient,
  listClients,
  serializeClient,
  updateClient,
  upsertClient,
} from "../../services/clients";

const tags = ["Clients"];
/** Customer data: for dispatchers (as contact addresses are). */
const DISPATCHERS = ["admin", "manager", "integration"] as const;

export const ClientSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    account: z.string().url(),
    name: z.string(),
    external_id: z.string().nullable(),
    emails: z.array(z.string()),
    phones: z.array(z.string()),
    notes: z.string(),
    metafields: z.record(z.string(), z.any()),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("Client");

const ClientWriteSchema = z.object({
  // Not blank (services/clients: "This field is required." / "may not be blank."), stated (issue 46).
  name: z.string().max(255).openapi({ description: "Required, not blank.", pattern: NOT_BLANK }),
  external_id: z
    .string()
    .max(255)
    .nullable()
    .optional()
    .openapi({ description: "Unique in the account; a POST naming a known one updates that client." }),
  emails: z.array(emailAddress().max(254)).max(50).optional(),
  phones: z.array(z.string().min(1).max(64)).max(50).optional(),
  notes: z.string().max(10_000).optional(),
  metafields: z
    .record(z.string(), z.any())
    .nullable()
    .optional()
    .openapi({ description: "Validated against the metafields defined with `applies_to: clients`." }),
});

export const createClientRoute = createRoute({
  method: "post",
  path: "/clients/",
  tags,
  security,
  summary: "Create a client, or update the one with this external_id",
  description:
    "201 when created; 200 when `external_id` named an existing client, whose fields sent are replaced.",
  request: jsonBody(ClientWriteSchema.openapi("ClientCreate")),
  responses: {
    200: jsonResponse(ClientSchema, "Updated (existing external_id)."),
    201: jsonResponse(ClientSchema, "Created."),
    ...errorResponses,
  },
});

export const listClientsRoute = createRoute({
  method: "get",
  path: "/clients/",
  tags,
  security,
  summary: "List clients",
  request: {
    query: z
      .object({
        ...paginationQuery,
        external_id: z.string().optional().openapi({ description: "Exact external id." }),
      })
      .strict(),
  },
  responses: { 200: jsonResponse(pageSchema(ClientSchema), "A page of clients."), ...errorResponses },
});

export const retrieveClientRoute = createRoute({
  method: "get",
  path: "/clients/{id}/",
  tags,
  security,
  summary: "Read a client",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(ClientSchema, "The client."), ...errorResponses },
});

function updateClientRouteFor<M extends "patch" | "put">(method: M) {
  return createRoute({
    method,
    path: "/clients/{id}/",
    tags,
    security,
    summary: method === "patch" ? "Change a client" : "Replace a client",
    request: {
      params: uuidParam,
      ...jsonBody(
        method === "patch"
          ? ClientWriteSchema.partial().openapi("ClientPatch")
          : ClientWriteSchema.openapi("ClientUpdate"),
      ),
    },
    responses: { 200: jsonResponse(ClientSchema, "The client."), ...errorResponses },
  });
}

export const partialUpdateClientRoute = updateClientRouteFor("patch");
export const updateClientRoute = updateClientRouteFor("put");

export const destroyClientRoute = createRoute({
  method: "delete",
  path: "/clients/{id}/",
  tags,
  security,
  summary: "Delete a client",
  description: "Its orders and tasks stay, with `client: null`.",
  request: { params: uuidParam },
  responses: { 204: { description: "Deleted." }, ...errorResponses },
});

export function mountClients(app: Router) {
  defineRoute(app, createClientRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const { row, created } = await upsertClient(c.env.DB, p, c.req.valid("json"));
    return c.json(serializeClient(renderCtx(c), row), created ? 201 : 200);
  });

  defineRoute(app, listClientsRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const page = await listClients(c.env.DB, p, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    return c.json(mapPage(page, (x) => serializeClient(r, x)));
  });

  defineRoute(app, retrieveClientRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    return c.json(serializeClient(renderCtx(c), await getClient(c.env.DB, p, pathId(c))));
  });

  for (const method of ["patch", "put"] as const) {
    const route = method === "patch" ? partialUpdateClientRoute : updateClientRoute;
    defineRoute(app, route, async (c) => {
      const p = requireRole(c, ...DISPATCHERS);
      const row = await updateClient(c.env.DB, p, pathId(c), c.req.valid("json"), method);
      return c.json(serializeClient(renderCtx(c), row));
    });
  }

  defineRoute(app, destroyClientRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    await deleteClient(c.env.DB, p, pathId(c));
    return c.body(null, 204);
  });
}
