import { createRoute, z } from "@hono/zod-openapi";
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
import { link, renderCtx } from "../../http/serialize";
import {
  activateUser,
  getUserInAccount,
  inviteByEmail,
  invitedUserView,
  listUsers,
  updateUser,
} from "../../services/accounts";
import { positionsFor } from "../../services/positions";
import { confirmEmailVerification, sendEmailVerification } from "../../services/users/actions";
import { hijackUser } from "../../services/users/hijack";
import {
  ActivateSchema,
  HijackSchema,
  RoleEnum,
  serializeFix,
  serializeUser,
  serializeUserFor,
  TokenSchema,
  UserCreateSchema,
  UserPatchSchema,
  UserSchema,
} from "./schema";

const tags = ["Users"];

export const createUserRoute = createRoute({
  method: "post",
  path: "/users/",
  tags,
  security,
  summary: "Add a user to the caller's account (admins)",
  description:
    "A new e-mail gets a user (active at once with `password`, else an activation e-mail); a registered e-mail gets a pending role (an invitation) that grants nothing until that user accepts it. Both answer 201 with the same fields, built from the request.",
  request: jsonBody(UserCreateSchema),
  responses: { 201: jsonResponse(UserSchema, "The user, as sent."), ...errorResponses },
});

export const activateUserRoute = createRoute({
  method: "post",
  path: "/users/activate/",
  operationId: "activateUser",
  tags,
  security: [],
  summary: "Set the password of a new user from the activation e-mail's token",
  description:
    "The token is single-use and valid 7 days. Activation also accepts the role the user was created with. Invalid, used or expired token: 400 on `token`.",
  request: jsonBody(ActivateSchema),
  responses: { 204: { description: "Activated; sign in with the new password." }, ...errorResponses },
});

export const listUsersRoute = createRoute({
  method: "get",
  path: "/users/",
  tags,
  security,
  summary: "Users of the caller's account",
  request: { query: z.object({ ...paginationQuery, role: RoleEnum.optional() }).strict() },
  responses: { 200: jsonResponse(pageSchema(UserSchema), "A page of users."), ...errorResponses },
});

export const listUserMeRoute = createRoute({
  method: "get",
  path: "/users/me/",
  tags,
  security,
  summary: "The calling user",
  responses: { 200: jsonResponse(UserSchema, "The caller."), ...errorResponses },
});

export const retrieveUserRoute = createRoute({
  method: "get",
  path: "/users/{id}/",
  tags,
  security,
  summary: "Read a user of the caller's account",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(UserSchema, "The user."), ...errorResponses },
});

export const partialUpdateUserRoute = createRoute({
  method: "patch",
  path: "/users/{id}/",
  tags,
  security,
  summary: "Change a user (the user itself, or an admin)",
  request: { params: uuidParam, ...jsonBody(UserPatchSchema) },
  responses: { 200: jsonResponse(UserSchema, "The user."), ...errorResponses },
});

export const verifyEmailUserRoute = createRoute({
  method: "post",
  path: "/users/{id}/verify_email/",
  operationId: "verifyEmailUser",
  tags,
  security,
  summary: "E-mail the user a link that confirms the address (the user itself, or an admin)",
  description:
    "Sends a single-use token valid 24 hours to the user's e-mail; sending again invalidates the previous token. Confirm with `POST /users/verify_email/confirm/`.",
  request: { params: uuidParam },
  responses: { 204: { description: "Sent." }, ...errorResponses },
});

export const confirmVerifyEmailUserRoute = createRoute({
  method: "post",
  path: "/users/verify_email/confirm/",
  operationId: "confirmVerifyEmailUser",
  tags,
  security: [],
  summary: "Confirm an e-mail address with the token from the verification e-mail",
  description:
    "Sets the user's `email_verified_at`. Unknown, forged, used, superseded or expired token: 400 on `token`, the same message for each.",
  request: jsonBody(TokenSchema),
  responses: { 204: { description: "Confirmed." }, ...errorResponses },
});

export const hijackUserRoute = createRoute({
  method: "post",
  path: "/users/{id}/hijack/",
  operationId: "hijackUser",
  tags,
  security,
  summary: "Act as a user of the caller's account for one hour (admins)",
  description:
    "Answers a session JWT of that user, scoped to this account, valid 1 hour, with the admin in its `act` claim (RFC 8693). " +
    "Requests made with it are the user's and are logged with the admin; a `user.hijacked` event is recorded. " +
    "Never another admin (403), never a user of another account (404); a hijack token cannot hijack, refresh, or issue other tokens (403). " +
    "It is revoked with the admin's own token.",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(HijackSchema, "The token."), ...errorResponses },
});

export function mountUsers(app: Router) {
  defineRoute(app, createUserRoute, async (c) => {
    const p = requireRole(c, "admin");
    const body = c.req.valid("json");
    const out = await inviteByEmail(c.env, p, body, c.get("baseUrl"));
    return c.json(serializeUser(renderCtx(c), invitedUserView(p, body, out.userId, out.role)), 201);
  });

  defineRoute(app, activateUserRoute, async (c) => {
    const body = c.req.valid("json");
    await activateUser(c.env, body.token, body.password);
    return c.body(null, 204);
  });

  defineRoute(app, confirmVerifyEmailUserRoute, async (c) => {
    await confirmEmailVerification(c.env, c.req.valid("json").token);
    return c.body(null, 204);
  });

  defineRoute(app, verifyEmailUserRoute, async (c) => {
    const p = requireUser(c);
    await sendEmailVerification(c.env, p, pathId(c), c.get("baseUrl"));
    return c.body(null, 204);
  });

  defineRoute(app, hijackUserRoute, async (c) => {
    const p = requireRole(c, "admin");
    return c.json(await hijackUser(c.env, p, pathId(c), c.get("baseUrl")));
  });

  defineRoute(app, listUsersRoute, async (c) => {
    const p = requireUser(c);
    const page = await listUsers(c.env, p, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    const fixes = await positionsFor(
      c.env,
      p,
      page.results.map((u) => u.id),
    );
    return c.json(
      mapPage(page, (u) => ({ ...serializeUserFor(r, p, u), position: serializeFix(r, fixes.get(u.id)) })),
    );
  });

  defineRoute(app, listUserMeRoute, async (c) => {
    const p = requireUser(c);
    const r = renderCtx(c);
    const [user, fixes] = await Promise.all([
      getUserInAccount(c.env, p.accountId, p.userId),
      positionsFor(c.env, p, [p.userId]),
    ]);
    return c.json({
      ...serializeUser(r, user),
      account_role: link(r, "account_roles", user.role_id),
      on_duty: Boolean(user.on_duty),
      position: serializeFix(r, fixes.get(p.userId)),
    });
  });

  defineRoute(app, retrieveUserRoute, async (c) => {
    const p = requireUser(c);
    const r = renderCtx(c);
    const id = pathId(c);
    const [user, fixes] = await Promise.all([
      getUserInAccount(c.env, p.accountId, id),
      positionsFor(c.env, p, [id]),
    ]);
    return c.json({ ...serializeUserFor(r, p, user), position: serializeFix(r, fixes.get(id)) });
  });

  defineRoute(app, partialUpdateUserRoute, async (c) => {
    const p = requireUser(c);
    return c.json(serializeUser(renderCtx(c), await updateUser(c.env, p, pathId(c), c.req.valid("json"))));
  });
}
