import { createRoute, z } from "@hono/zod-openapi";
import { permissionDenied } from "../../http/errors";
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
import { pageSchema, paginationQuery } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import { getAccountFor, listAccountsFor, updateAccount } from "../../services/accounts";
import { signUp } from "../../services/accounts/signup";
import { AccountPatchSchema, AccountSchema, SignUpSchema, serializeAccount } from "./schema";

const tags = ["Accounts"];

export const createAccountRoute = createRoute({
  method: "post",
  path: "/accounts/",
  tags,
  summary: "Sign up: create an account and its first admin user",
  description:
    "Open only where the deployment sets `ALLOW_SIGNUP=true` (local development); 403 otherwise. A registered e-mail answers the same 201: its user gets an invitation to be the new account's admin (the password sent is ignored).",
  request: jsonBody(SignUpSchema),
  responses: { 201: jsonResponse(AccountSchema, "The new account."), ...errorResponses },
});

export const listAccountsRoute = createRoute({
  method: "get",
  path: "/accounts/",
  tags,
  security,
  summary: "The account the caller's token acts in",
  description:
    "One item: the account of the token (a session JWT or access token: the user's default account; an authorization JWT or hijack token: its account). A user's other accounts are reached by exchanging the session at `POST /session_tokens/authorize/`.",
  request: { query: z.object(paginationQuery).strict() },
  responses: {
    200: jsonResponse(pageSchema(AccountSchema), "A page of accounts."),
    ...errorResponses,
  },
});

export const retrieveAccountRoute = createRoute({
  method: "get",
  path: "/accounts/{id}/",
  tags,
  security,
  summary: "Read the account the caller's token acts in",
  description:
    "Any other account is 404, even one where the user holds a role: authorize that account first.",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(AccountSchema, "The account."), ...errorResponses },
});

export const partialUpdateAccountRoute = createRoute({
  method: "patch",
  path: "/accounts/{id}/",
  tags,
  security,
  summary: "Change account settings (admins)",
  request: { params: uuidParam, ...jsonBody(AccountPatchSchema) },
  responses: { 200: jsonResponse(AccountSchema, "The account."), ...errorResponses },
});

export function mountAccounts(app: Router) {
  defineRoute(app, createAccountRoute, async (c) => {
    if (c.env.ALLOW_SIGNUP !== "true") throw permissionDenied("Sign-up is closed on this deployment.");
    const { account } = await signUp(c.env, c.req.valid("json"), c.get("baseUrl"));
    return c.json(serializeAccount(renderCtx(c), account), 201);
  });

  defineRoute(app, listAccountsRoute, async (c) => {
    const p = requireUser(c);
    const rows = await listAccountsFor(c.env, p);
    const r = renderCtx(c);
    return c.json({ next: null, previous: null, results: rows.map((a) => serializeAccount(r, a)) });
  });

  defineRoute(app, retrieveAccountRoute, async (c) => {
    const p = requireUser(c);
    return c.json(serializeAccount(renderCtx(c), await getAccountFor(c.env, p, pathId(c))));
  });

  defineRoute(app, partialUpdateAccountRoute, async (c) => {
    const p = requireUser(c);
    const row = await updateAccount(c.env, p, pathId(c), c.req.valid("json"));
    return c.json(serializeAccount(renderCtx(c), row));
  });
}
