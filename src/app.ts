import { getPath } from "hono/utils/url";
import { mountAccountRoles } from "./api/account-roles";
import { mountAccounts } from "./api/accounts";
import { mountAttachments } from "./api/attachments";
import { mountAuth } from "./api/auth";
import { mountBootstrap } from "./api/bootstrap";
import { mountContactAddresses } from "./api/contact-addresses";
import { mountEvents } from "./api/events";
import { mountFileUploads } from "./api/file-uploads";
import { mountMeta } from "./api/meta";
import { mountOrders } from "./api/orders";
import { mountOutbox } from "./api/outbox";
import { mountStorage } from "./api/storage";
import { mountTaskCommands } from "./api/task-commands";
import { mountTasks } from "./api/tasks";
import { mountUsers } from "./api/users";
import { mountWebhooks } from "./api/webhooks";
import type { AppEnv } from "./http/context";
import { ApiError, notFound, renderError } from "./http/errors";
import {
  authenticate,
  cors,
  isNonApiPath,
  jsonBodyLimit,
  rateLimit,
  requestContext,
  timeZone,
  trailingSlash,
} from "./http/middleware";
import { createRouter } from "./http/openapi";
import { finishDocument } from "./http/openapi-document";
import { dispatchAfterWrites } from "./http/relay";
import { strictJson } from "./http/strict-json";
import { CURRENT_VERSION } from "./http/versions";

/**
 * The docs page's Content-Security-Policy (CSP Level 3): scripts, styles and everything else from
 * this origin only, no inline script (Swagger UI starts from docs/init.js), data: images (Swagger
 * UI's CSS icons), and never framed (`frame-ancestors 'none'`).
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

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
  app.use("*", cors);
  app.use("*", authenticate);
  app.use("*", trailingSlash);
  app.use("*", timeZone);
  app.use("*", jsonBodyLimit);
  app.use("*", rateLimit);
  app.use("*", strictJson);
  // After a successful write, hand new outbox events to webhooks (the cron is the safety net).
  app.use("*", dispatchAfterWrites);

  mountMeta(app);
  mountAuth(app);
  mountAccounts(app);
  mountBootstrap(app);
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
  // The document costs tens of milliseconds of CPU to generate: made once per isolate, and its
  // text kept per origin (`servers` names the origin the request came to; a few at most).
  let document: ReturnType<typeof finishDocument> | null = null;
  const documentText = new Map<string, string>();
  app.get("/openapi.json", (c) => {
    const origin = new URL(c.req.url).origin;
    let text = documentText.get(origin);
    if (text === undefined) {
      document ??= finishDocument(
        app.getOpenAPI31Document({
          openapi: "3.1.0",
          info: { title: "Field task dispatch service", version: CURRENT_VERSION },
        }),
      );
      if (documentText.size >= 16) documentText.clear();
      text = JSON.stringify({
        openapi: document.openapi,
        info: document.info,
        servers: [{ url: origin }],
        ...document,
      });
      documentText.set(origin, text);
    }
    return c.body(text, 200, { "Content-Type": "application/json; charset=utf-8" });
  });

  // The docs page: its files are static assets of this Worker (wrangler.jsonc `assets`, Swagger UI
  // from the pinned swagger-ui-dist), so it renders offline and references no other origin.
  app.on(["GET", "HEAD"], "/docs/*", async (c) => {
    // `/docs/*` matches `/docs` too; the page's links are relative to `/docs/`.
    if (!new URL(c.req.url).pathname.startsWith("/docs/")) return c.redirect("/docs/", 301);
    const asset = await c.env.ASSETS.fetch(c.req.raw);
    if (asset.status === 404) throw notFound();
    const res = new Response(asset.body, asset);
    res.headers.set("Content-Security-Policy", DOCS_CSP);
    res.headers.set("X-Content-Type-Options", "nosniff");
    res.headers.set("Referrer-Policy", "no-referrer");
    return res;
  });

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
