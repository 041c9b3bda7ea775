import { createRoute, z } from "@hono/zod-openapi";
import { fieldError, permissionDenied } from "../../http/errors";
import { pathId, requireUser } from "../../http/guards";
import {
  dateTime,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonResponse,
  type Router,
  security,
  uuidParam,
} from "../../http/openapi";
import { mapPage, pageSchema, paginationQuery } from "../../http/pagination";
import { link, type RenderCtx, renderCtx, ts } from "../../http/serialize";
import { hyperlinkSchema, parseHyperlink } from "../../http/urls";
import { atLeast } from "../../http/versions";
import {
  authenticate,
  authorizeAccount,
  createNamedSession,
  listSessions,
  logout,
  revokeSession,
  type SessionRow,
} from "../../services/auth";
import { refreshToken } from "../../services/auth/tokens";

const tags = ["Authentication"];

const TokenSchema = z.object({ token: z.string() }).openapi("Token");
const LegacyTokenSchema = z
  .object({ token: z.string(), user: z.string().url(), account: z.string().url().nullable() })
  .openapi("LegacyToken");

const SessionTokenSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    kind: z.enum(["session", "access"]),
    name: z.string(),
    user: z.string().url(),
    created_at: dateTime(),
    expires_at: dateTime().nullable(),
    token: z.string().optional().openapi({ description: "Only in the answer to POST." }),
  })
  .openapi("SessionToken");

function serializeSession(r: RenderCtx, s: SessionRow) {
  return {
    id: s.id,
    url: link(r, "session_tokens", s.id),
    kind: s.kind,
    name: s.name,
    user: link(r, "users", s.user_id),
    created_at: ts(r, s.created_at),
    expires_at: ts(r, s.expires_at),
  };
}

export const createAuthenticateRoute = createRoute({
  method: "post",
  path: "/authenticate/",
  tags,
  summary: "Exchange e-mail and password for a token",
  description:
    "From 2.10.0: `{token}` with a session JWT (30 days). Before 2.10.0: `{token, user, account}` with a long-lived access token. Wrong credentials: 400 `non_field_errors`, the same text whether the user exists or not.",
  request: jsonBody(
    z.object({ username: z.string().min(1), password: z.string().min(1) }).openapi("SessionCreate"),
  ),
  responses: {
    200: jsonResponse(z.union([TokenSchema, LegacyTokenSchema]), "A token."),
    ...errorResponses,
  },
});

export const createLogoutRoute = createRoute({
  method: "post",
  path: "/logout/",
  tags,
  security,
  summary: "Revoke the presenting token",
  responses: {
    204: {
      description: "Revoked; the token now gets 401.",
      headers: {
        "Clear-Site-Data": {
          description:
            '`"cache"` (W3C Clear Site Data): a browser drops what it cached from this origin, such as a stored file opened before signing out.',
          required: true,
          schema: { type: "string" },
        },
      },
    },
    ...errorResponses,
  },
});

export const createSessionTokenRefreshRoute = createRoute({
  method: "post",
  path: "/session_tokens/refresh/",
  tags,
  security,
  summary: "Re-sign the presenting session with a new expiry",
  description:
    "A session JWT gets the same session re-signed (30 days from now); an authorization JWT gets 15 more minutes; a legacy access token is exchanged for a session JWT.",
  responses: { 200: jsonResponse(TokenSchema, "A fresh token."), ...errorResponses },
});

export const createSessionTokenAuthorizeRoute = createRoute({
  method: "post",
  path: "/session_tokens/authorize/",
  tags,
  security,
  summary: "Exchange a session for a 15-minute authorization JWT scoped to one account",
  request: jsonBody(
    z.object({ account: hyperlinkSchema("accounts", "Account URL.") }).openapi("SessionTokenAuthorize"),
  ),
  responses: { 200: jsonResponse(TokenSchema, "Authorization token."), ...errorResponses },
});

export const listSessionTokensRoute = createRoute({
  method: "get",
  path: "/session_tokens/",
  tags,
  security,
  summary: "The caller's own live sessions",
  description:
    "Session JWTs and access tokens of the calling user, newest first (never the token strings). Not with a hijack token (403): sessions are the user's, not the account's.",
  request: { query: z.object(paginationQuery).strict() },
  responses: {
    200: jsonResponse(pageSchema(SessionTokenSchema), "A page of sessions."),
    ...errorResponses,
  },
});

export const createSessionTokenRoute = createRoute({
  method: "post",
  path: "/session_tokens/",
  tags,
  security,
  summary: "Create a named session (integration users only)",
  request: jsonBody(z.object({ name: z.string().max(200).default("") }).openapi("SessionTokenCreate")),
  responses: {
    201: jsonResponse(SessionTokenSchema, "The session with its token (shown once)."),
    ...errorResponses,
  },
});

export const destroySessionTokenRoute = createRoute({
  method: "delete",
  path: "/session_tokens/{id}/",
  tags,
  security,
  summary: "Revoke one of the caller's sessions",
  request: { params: uuidParam },
  responses: { 204: { description: "Revoked." }, ...errorResponses },
});

export function mountAuth(app: Router) {
  defineRoute(app, createAuthenticateRoute, async (c) => {
    const { username, password } = c.req.valid("json");
    const legacy = !atLeast(c.get("version"), "2.10.0");
    const out = await authenticate(c.env, username, password, legacy, c.req.header("CF-Connecting-IP"));
    if (!legacy) return c.json({ token: out.token });
    const r = renderCtx(c);
    return c.json({
      token: out.token,
      user: link(r, "users", out.userId),
      account: link(r, "accounts", out.accountId),
    });
  });

  defineRoute(app, createLogoutRoute, async (c) => {
    const p = requireUser(c);
    await logout(c.env, p);
    // W3C Clear Site Data: the browser that signs out drops this origin's HTTP cache (a document
    // or signature opened on a shared phone; issue 52 item 3). Not "storage": the field app's
    // offline queue of another user, kept in IndexedDB, must survive a sign-out.
    return c.body(null, 204, { "Clear-Site-Data": '"cache"' });
  });

  defineRoute(app, createSessionTokenRefreshRoute, async (c) => {
    const p = requireUser(c);
    const t = await refreshToken(c.env, p);
    return c.json({ token: t.token });
  });

  defineRoute(app, createSessionTokenAuthorizeRoute, async (c) => {
    const p = requireUser(c);
    const accountId = parseHyperlink(c.req.valid("json").account, "accounts");
    if (!accountId) throw fieldError("account", "Invalid hyperlink - No URL match.");
    const t = await authorizeAccount(c.env, p, accountId);
    return c.json({ token: t.token });
  });

  defineRoute(app, listSessionTokensRoute, async (c) => {
    const p = requireUser(c);
    const r = renderCtx(c);
    const page = await listSessions(c.env, p, { ...c.req.valid("query"), url: c.req.url });
    return c.json(mapPage(page, (s) => serializeSession(r, s)));
  });

  defineRoute(app, createSessionTokenRoute, async (c) => {
    const p = requireUser(c);
    if (p.role !== "integration") throw permissionDenied("Only integration users can create session tokens.");
    const { row, token } = await createNamedSession(c.env, p, c.req.valid("json").name);
    return c.json({ ...serializeSession(renderCtx(c), row), token }, 201);
  });

  defineRoute(app, destroySessionTokenRoute, async (c) => {
    const p = requireUser(c);
    await revokeSession(c.env, p, pathId(c));
    return c.body(null, 204);
  });
}
