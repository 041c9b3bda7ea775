import { createRoute } from "@hono/zod-openapi";
import { pathId, requireRole } from "../../http/guards";
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
  ContactAddressCreateSchema,
  ContactAddressListQuery,
  ContactAddressPatchSchema,
  ContactAddressSchema,
  ContactAddressUpdateSchema,
} from "../../schemas/contact-addresses";
import {
  createContactAddress,
  deleteContactAddress,
  getContactAddress,
  listContactAddresses,
  serializeContactAddress,
  updateContactAddress,
} from "../../services/contact-addresses";

const tags = ["Contact addresses"];
// Contact data of the account's customers: for dispatchers (workers see what their tasks copied).
const DISPATCHERS = ["admin", "manager", "integration"] as const;

export const createContactAddressRoute = createRoute({
  method: "post",
  path: "/contact_addresses/",
  tags,
  security,
  summary: "Create a contact address",
  description: "`external_id` is unique in the account (a duplicate is 400 on `external_id`).",
  request: jsonBody(ContactAddressCreateSchema),
  responses: { 201: jsonResponse(ContactAddressSchema, "The contact address."), ...errorResponses },
});

export const listContactAddressesRoute = createRoute({
  method: "get",
  path: "/contact_addresses/",
  tags,
  security,
  summary: "List contact addresses",
  request: { query: ContactAddressListQuery },
  responses: {
    200: jsonResponse(pageSchema(ContactAddressSchema), "A page of contact addresses."),
    ...errorResponses,
  },
});

export const retrieveContactAddressRoute = createRoute({
  method: "get",
  path: "/contact_addresses/{id}/",
  tags,
  security,
  summary: "Read a contact address",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(ContactAddressSchema, "The contact address."), ...errorResponses },
});

export const destroyContactAddressRoute = createRoute({
  method: "delete",
  path: "/contact_addresses/{id}/",
  tags,
  security,
  summary: "Delete a contact address",
  description: "Tasks linked to it keep their copied address and contact, and their link (for filtering).",
  request: { params: uuidParam },
  responses: { 204: { description: "Deleted." }, ...errorResponses },
});

function updateContactAddressRouteFor<M extends "patch" | "put">(method: M) {
  return createRoute({
    method,
    path: "/contact_addresses/{id}/",
    tags,
    security,
    summary: method === "patch" ? "Change a contact address" : "Replace a contact address",
    description: "Tasks that copied this contact address keep their copy.",
    request: {
      params: uuidParam,
      ...jsonBody(method === "patch" ? ContactAddressPatchSchema : ContactAddressUpdateSchema),
    },
    responses: { 200: jsonResponse(ContactAddressSchema, "The contact address."), ...errorResponses },
  });
}

export const partialUpdateContactAddressRoute = updateContactAddressRouteFor("patch");
export const updateContactAddressRoute = updateContactAddressRouteFor("put");

export function mountContactAddresses(app: Router) {
  defineRoute(app, createContactAddressRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const row = await createContactAddress(c.env, p, c.req.valid("json"));
    return c.json(serializeContactAddress(renderCtx(c), row), 201);
  });

  defineRoute(app, listContactAddressesRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const page = await listContactAddresses(c.env.DB, p, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    return c.json(mapPage(page, (x) => serializeContactAddress(r, x)));
  });

  defineRoute(app, retrieveContactAddressRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    return c.json(serializeContactAddress(renderCtx(c), await getContactAddress(c.env.DB, p, pathId(c))));
  });

  for (const method of ["patch", "put"] as const) {
    const route = method === "patch" ? partialUpdateContactAddressRoute : updateContactAddressRoute;
    defineRoute(app, route, async (c) => {
      const p = requireRole(c, ...DISPATCHERS);
      const row = await updateContactAddress(c.env, p, pathId(c), c.req.valid("json"), method);
      return c.json(serializeContactAddress(renderCtx(c), row));
    });
  }

  defineRoute(app, destroyContactAddressRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    await deleteContactAddress(c.env, p, pathId(c));
    return c.body(null, 204);
  });
}
