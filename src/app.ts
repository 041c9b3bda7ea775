import { swaggerUI } from "@hono/swagger-ui";
import { getPath } from "hono/utils/url";
import type { AppEnv } from "./http/context";
import { ApiError, notFound, renderError } from "./http/errors";
import {
  authenticate,
  isNonApiPath,
  jsonBodyLimit,
  rateLimit,
  requestContext,
  timeZone,
  trailingSlash,
} from "./http/middleware";
import { createRouter } from "./http/openapi";
import { strictJson } from "./http/strict-json";
import { CURRENT_VERSION } from "./http/versions";
import { mountAccountRoles } from "./routes/account-roles";
import { mountAccounts } from "./routes/accounts";
import { mountAuth } from "./routes/auth";
import { mountContactAddresses } from "./routes/contact-addresses";
import { mountAttachments } from "./routes/documents";
import { dispatchAfterWrites, mountEvents } from "./routes/events";
import { mountFileUploads } from "./routes/file-uploads";
import { mountOrders } from "./routes/orders";
import { mountOutbox } from "./routes/outbox";
import { mountStorage } from "./routes/storage";
import { mountTaskCommands } from "./routes/task-commands";
import { mountTasks } from "./routes/tasks";
import { mountUsers } from "./routes/users";
import { mountWebhooks } from "./routes/webhooks";

/**
 * Routing sees every API path with its trailing slash, so `/tasks` and `/tasks/` reach the
 * same handler; whether the slash-less form is served is the caller's version's business
 * (the `trailingSlash` middleware answers 404 from 2.10.0 on).
 */
function routingPath(request: Request): string {
  const path = getPath(request);
  return path.endsWith("/") || isNonApiPath(path) ? path : `${path}/`;
}

export function createApp() {
  const app = createRouter();
  // Hono's constructor option is not exposed on OpenAPIHono's type; assign the router's path reader.
  (app as unknown as { getPath: typeof routingPath }).getPath = routingPath;

  app.onError((err, c) => renderError(err, c));
  app.notFound((c) => renderError(notFound(), c));

  // The order is the request flow of ../shared/architecture.md.
  app.use("*", requestContext);
  app.use("*", authenticate);
  app.use("*", trailingSlash);
  app.use("*", timeZone);
  app.use("*", jsonBodyLimit);
  app.use("*", rateLimit);
  app.use("*", strictJson);
  // After a successful write, hand new outbox events to webhooks (the cron is the safety net).
  app.use("*", dispatchAfterWrites);

  mountAuth(app);
  mountAccounts(app);
  mountUsers(app);
  mountAccountRoles(app);
  mountTasks(app);
  mountOrders(app);
  mountContactAddresses(app);
  mountTaskCommands(app);
  mountFileUploads(app);
  mountAttachments(app);
  mountStorage(app);
  mountWebhooks(app);
  mountEvents(app);
  mountOutbox(app);

  app.openAPIRegistry.registerComponent("securitySchemes", "Bearer", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "Session JWT (from /authenticate/), authorization JWT, or a legacy access token.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "Token", {
    type: "apiKey",
    in: "header",
    name: "Authorization",
    description: "Legacy scheme: `Authorization: Token <token>`.",
  });
  app.doc31("/openapi.json", (c) => ({
    openapi: "3.1.0",
    info: {
      title: "Field task dispatch service",
      version: CURRENT_VERSION,
      description:
        "Declare your version with `Accept: application/json; version=X.Y.Z` (default: your account's pinned version). " +
        "Errors are DRF-shaped. See the README's API notes for decisions beyond the interface.",
    },
    servers: [{ url: new URL(c.req.url).origin }],
  }));
  app.get("/docs/", swaggerUI({ url: "/openapi.json", title: "Field task dispatch API" }));
  app.get("/docs", (c) => c.redirect("/docs/", 301));

  // 405 with Allow for known paths hit with another method (DRF behaviour).
  app.all("*", (c) => {
    const allowed = allowedMethods(app, routingPath(c.req.raw));
    if (allowed.length) {
      throw new ApiError(405, "method_not_allowed", `Method "${c.req.method}" not allowed.`, {
        Allow: allowed.join(", "),
      });
    }
    throw notFound();
  });
  return app;
}

function allowedMethods(app: ReturnType<typeof createRouter>, path: string): string[] {
  const methods = new Set<string>();
  for (const r of app.routes) {
    if (r.method === "ALL") continue;
    const re = new RegExp(`^${r.path.replace(/:[^/]+/g, "[^/]+")}$`);
    if (re.test(path)) methods.add(r.method);
  }
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods].sort();
}

export type App = ReturnType<typeof createApp>;
export type { AppEnv };
