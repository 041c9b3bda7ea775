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
import { renderCtx } from "../../http/serialize";
import { createUser, getUserInAccount, listUsers, updateUser } from "../../services/accounts";
import { RoleEnum, serializeUser, UserCreateSchema, UserPatchSchema, UserSchema } from "./schema";

const tags = ["Users"];

export function mountUsers(app: Router) {
  defineRoute(
    app,
    createRoute({
      method: "post",
      path: "/users/",
      tags,
      security,
      summary: "Create a user with a role in the caller's account (admins)",
      request: jsonBody(UserCreateSchema),
      responses: { 201: jsonResponse(UserSchema, "The user."), ...errorResponses },
    }),
    async (c) => {
      const p = requireRole(c, "admin");
      return c.json(serializeUser(renderCtx(c), await createUser(c.env, p, c.req.valid("json"))), 201);
    },
  );

  defineRoute(
    app,
    createRoute({
      method: "get",
      path: "/users/",
      tags,
      security,
      summary: "Users of the caller's account",
      request: { query: z.object({ ...paginationQuery, role: RoleEnum.optional() }).strict() },
      responses: { 200: jsonResponse(pageSchema(UserSchema), "A page of users."), ...errorResponses },
    }),
    async (c) => {
      const p = requireUser(c);
      const page = await listUsers(c.env, p, c.req.valid("query"), c.req.url);
      const r = renderCtx(c);
      return c.json(mapPage(page, (u) => serializeUser(r, u)));
    },
  );

  defineRoute(
    app,
    createRoute({
      method: "get",
      path: "/users/me/",
      tags,
      security,
      summary: "The calling user",
      responses: { 200: jsonResponse(UserSchema, "The caller."), ...errorResponses },
    }),
    async (c) => {
      const p = requireUser(c);
      return c.json(serializeUser(renderCtx(c), await getUserInAccount(c.env, p.accountId, p.userId)));
    },
  );

  defineRoute(
    app,
    createRoute({
      method: "get",
      path: "/users/{id}/",
      tags,
      security,
      summary: "Read a user of the caller's account",
      request: { params: uuidParam },
      responses: { 200: jsonResponse(UserSchema, "The user."), ...errorResponses },
    }),
    async (c) => {
      const p = requireUser(c);
      return c.json(serializeUser(renderCtx(c), await getUserInAccount(c.env, p.accountId, pathId(c))));
    },
  );

  defineRoute(
    app,
    createRoute({
      method: "patch",
      path: "/users/{id}/",
      tags,
      security,
      summary: "Change a user (the user itself, or an admin)",
      request: { params: uuidParam, ...jsonBody(UserPatchSchema) },
      responses: { 200: jsonResponse(UserSchema, "The user."), ...errorResponses },
    }),
    async (c) => {
      const p = requireUser(c);
      return c.json(serializeUser(renderCtx(c), await updateUser(c.env, p, pathId(c), c.req.valid("json"))));
    },
  );
}
