import { createRoute, z } from "@hono/zod-openapi";
import { defineRoute, errorResponses, jsonResponse, type Router } from "../../http/openapi";
import { collectionUrl } from "../../http/urls";
import { databaseAnswers } from "../../services/health";

const tags = ["Service"];

/** The collections a client starts from, as DRF's DefaultRouter lists them at its root. */
const ROOT_COLLECTIONS = [
  "accounts",
  "users",
  "account_roles",
  "session_tokens",
  "tasks",
  "orders",
  "task_commands",
  "contact_addresses",
  "file_uploads",
  "documents",
  "signatures",
  "webhooks",
  "events",
] as const;

const RootSchema = z
  .object({
    docs: z.string().url(),
    openapi: z.string().url(),
    health: z.string().url(),
    authenticate: z.string().url(),
  })
  .catchall(z.string().url())
  .openapi("ApiRoot", {
    description: "Links to the documentation and to every main collection (like DRF's browsable API root).",
  });

const HealthSchema = z
  .object({
    status: z.enum(["ok", "unavailable"]),
    database: z.enum(["ok", "unavailable"]),
  })
  .openapi("Health", {
    example: { status: "ok", database: "ok" },
    description: "Whether the service can serve requests. Reveals no configuration.",
  });

export const listRoute = createRoute({
  method: "get",
  path: "/",
  tags,
  security: [],
  summary: "API root: links to the docs, the OpenAPI document and the main collections",
  description: "No token needed; a token that is sent must be valid (an invalid or revoked one is 401).",
  responses: { 200: jsonResponse(RootSchema, "Links."), 401: errorResponses[401] },
});

export const listHealthRoute = createRoute({
  method: "get",
  path: "/health/",
  tags,
  security: [],
  summary: "Health check for load balancers and uptime monitors",
  description:
    "200 when the database answers, 503 when it does not. No token needed; a token that is sent must be valid (an invalid or revoked one is 401).",
  responses: {
    200: jsonResponse(HealthSchema, "The service is up."),
    503: jsonResponse(HealthSchema, "The database does not answer."),
    401: errorResponses[401],
  },
});

export function mountMeta(app: Router) {
  defineRoute(app, listRoute, (c) => {
    const base = c.get("baseUrl");
    const links: Record<string, string> = {
      docs: `${base}/docs/`,
      openapi: `${base}/openapi.json`,
      health: `${base}/health/`,
      authenticate: `${base}/authenticate/`,
    };
    for (const name of ROOT_COLLECTIONS) links[name] = collectionUrl(base, name);
    return c.json(links);
  });

  defineRoute(app, listHealthRoute, async (c) => {
    const ok = await databaseAnswers(c.env);
    return ok
      ? c.json({ status: "ok" as const, database: "ok" as const }, 200)
      : c.json({ status: "unavailable" as const, database: "unavailable" as const }, 503);
  });
}
