import { createRoute, z } from "@hono/zod-openapi";
import { fieldError } from "../../http/errors";
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
import { mapPage, pageSchema, paginationQuery } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import { parseHyperlink } from "../../http/urls";
import { acceptRole, createRole, deleteRole, getRole, listRoles } from "../../services/accounts";
import { updateRole } from "../../services/accounts/roles";
import { resendActivationToken } from "../../services/users/actions";
import {
  AccountRoleCreateSchema,
  AccountRolePatchSchema,
  AccountRoleSchema,
  RoleEnum,
  serializeRole,
} from "../users/schema";

const tags = ["Account roles"];

export const listAccountRolesRoute = createRoute({
  method: "get",
  path: "/account_roles/",
  tags,
  security,
  summary: "Roles in the caller's account (admins, managers)",
  request: { query: z.object({ ...paginationQuery, role: RoleEnum.optional() }).strict() },
  responses: { 200: jsonResponse(pageSchema(AccountRoleSchema), "A page of roles."), ...errorResponses },
});

export const createAccountRoleRoute = createRoute({
  method: "post",
  path: "/account_roles/",
  tags,
  security,
  summary: "Invite an e-mail to the caller's account with a role (admins)",
  description:
    "The role is `pending` until the user accepts it (`POST /account_roles/{id}/accept/`) or, for a new e-mail, activates the account from the e-mail; the answer is the same whether the e-mail was registered or not.",
  request: jsonBody(AccountRoleCreateSchema),
  responses: { 201: jsonResponse(AccountRoleSchema, "The role."), ...errorResponses },
});

export const retrieveAccountRoleRoute = createRoute({
  method: "get",
  path: "/account_roles/{id}/",
  tags,
  security,
  summary: "Read a role (admins, managers)",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(AccountRoleSchema, "The role."), ...errorResponses },
});

export const partialUpdateAccountRoleRoute = createRoute({
  method: "patch",
  path: "/account_roles/{id}/",
  tags,
  security,
  summary: "Change a role (admins; `on_duty` also managers and the role's own user)",
  description:
    "Admins change any field. `on_duty` (contract §28) may also be set by the account's managers and by the role's own user (who finds its role's URL as `account_role` in `GET /users/me/`); any other field from them is 403 and nothing changes. A change of `on_duty` makes the event `worker.duty_changed`.",
  request: { params: uuidParam, ...jsonBody(AccountRolePatchSchema) },
  responses: { 200: jsonResponse(AccountRoleSchema, "The role."), ...errorResponses },
});

export const destroyAccountRoleRoute = createRoute({
  method: "delete",
  path: "/account_roles/{id}/",
  tags,
  security,
  summary: "Remove a user from the account (admins)",
  request: { params: uuidParam },
  responses: { 204: { description: "Removed." }, ...errorResponses },
});

export const acceptAccountRoleRoute = createRoute({
  method: "post",
  path: "/account_roles/{id}/accept/",
  operationId: "acceptAccountRole",
  tags,
  security,
  summary: "Accept an invitation (the invited user only)",
  description:
    "Makes a pending role active. Only the user the role is for may accept it; for anyone else it is 404. Accepting an active role changes nothing.",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(AccountRoleSchema, "The role, now active."), ...errorResponses },
});

export const resendActivationTokenAccountRoleRoute = createRoute({
  method: "post",
  path: "/account_roles/{id}/resend_activation_token/",
  operationId: "resendActivationTokenAccountRole",
  tags,
  security,
  summary: "E-mail a fresh activation token (admins)",
  description:
    "For a user who has not activated yet: a new token valid 7 days; the previous one stops working. A user who already activated: 400.",
  request: { params: uuidParam },
  responses: { 204: { description: "Sent." }, ...errorResponses },
});

export function mountAccountRoles(app: Router) {
  defineRoute(app, listAccountRolesRoute, async (c) => {
    const p = requireRole(c, "admin", "manager");
    const page = await listRoles(c.env, p, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    return c.json(mapPage(page, (x) => serializeRole(r, x)));
  });

  defineRoute(app, createAccountRoleRoute, async (c) => {
    const p = requireRole(c, "admin");
    const body = c.req.valid("json");
    let userId: string | undefined;
    if (body.user) {
      userId = parseHyperlink(body.user, "users") ?? undefined;
      if (!userId) throw fieldError("user", "Invalid hyperlink - No URL match.");
    }
    const row = await createRole(c.env, p, { userId, email: body.email, role: body.role }, c.get("baseUrl"));
    return c.json(serializeRole(renderCtx(c), row), 201);
  });

  defineRoute(app, retrieveAccountRoleRoute, async (c) => {
    const p = requireRole(c, "admin", "manager");
    return c.json(serializeRole(renderCtx(c), await getRole(c.env, p.accountId, pathId(c))));
  });

  defineRoute(app, partialUpdateAccountRoleRoute, async (c) => {
    // Admins change anything; managers and the role's own user `on_duty` only (services/accounts/roles.ts).
    const p = requireRole(c, "admin", "manager", "worker", "integration");
    const role = await updateRole(c.env, p, pathId(c), c.req.valid("json"), { baseUrl: c.get("baseUrl") });
    return c.json(serializeRole(renderCtx(c), role));
  });

  defineRoute(app, destroyAccountRoleRoute, async (c) => {
    const p = requireRole(c, "admin");
    await deleteRole(c.env, p, pathId(c));
    return c.body(null, 204);
  });

  defineRoute(app, resendActivationTokenAccountRoleRoute, async (c) => {
    const p = requireRole(c, "admin");
    await resendActivationToken(c.env, p, pathId(c), c.get("baseUrl"));
    return c.body(null, 204);
  });

  defineRoute(app, acceptAccountRoleRoute, async (c) => {
    const p = requireUser(c);
    return c.json(serializeRole(renderCtx(c), await acceptRole(c.env, p, pathId(c))));
  });
}
