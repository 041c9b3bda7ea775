import { getPath } from "hono/utils/url";
import { mountAccountRoles } from "../api/account-roles";
import { mountAccounts } from "../api/accounts";
import { mountArchives } from "../api/archives";
import { mountAttachments } from "../api/attachments";
import { mountAuth } from "../api/auth";
import { mountAutoAssign } from "../api/auto-assign";
import { mountBootstrap } from "../api/bootstrap";
import { mountClients } from "../api/clients";
import { mountContactAddresses } from "../api/contact-addresses";
import { mountEvents } from "../api/events";
import { mountExports } from "../api/exports";
import { mountFileUploads } from "../api/file-uploads";
import { mountFormFields } from "../api/form-fields";
import { mountFormResponses } from "../api/form-responses";
import { mountForms } from "../api/forms";
import { mountImports } from "../api/imports";
import { mountMeta } from "../api/meta";
import { mountMetafields } from "../api/metafields";
import { mountNotificationTemplates } from "../api/notification-templates";
import { mountOrders } from "../api/orders";
import { mountOutbox } from "../api/outbox";
import { mountPod } from "../api/pod";
import { mountPositions } from "../api/positions";
import { mountRecurrences } from "../api/recurrences";
import { mountRouteOptimizations } from "../api/route-optimizations";
import { mountRoutes } from "../api/routes";
import { mountSms } from "../api/sms";
import { mountTaskCommands } from "../api/task-commands";
import { mountTasks } from "../api/tasks";
import { mountTrackers } from "../api/trackers";
import { mountUsers } from "../api/users";
import { mountWebhooks } from "../api/webhooks";
import { notFound, renderError } from "../http/errors";
import {
  apiCors,
  authenticate,
  jsonBodyLimit,
  rateLimit,
  requestContext,
  setRedispatch,
  timeZone,
  trailingSlash,
} from "../http/middleware";
import { createRouter } from "../http/openapi";
import { dispatchAfterWrites } from "../http/relay";
import { strictJson } from "../http/strict-json";
import { RecurrenceShortcutSchema } from "../schemas/recurrences";
import { AddressInputSchema, AddressSchema, ContactSchema, GeoPointSchema } from "../schemas/tasks";
import { TimeZoneSchema } from "../schemas/time-zones";
import { PointSchema } from "../services/task-commands";
import { methodNotAllowedOr404, ownMethodsOnly } from "./fallback";

/**
 * Routing sees every API path with its trailing slash, so `/tasks` and `/tasks/` reach the
 * same handler; whether the slash-less form is served is the caller's version's business
 * (the `trailingSlash` middleware answers 404 from 2.10.0 on).
 */
function routingPath(request: Request): string {
  const path = getPath(request);
  return path.endsWith("/") ? path : `${path}/`;
}

/** The versioned JSON API, with its own middleware chain. */
export function createApiApp() {
  const app = createRouter();
  // Hono's constructor option is not exposed on OpenAPIHono's type; assign the router's path reader.
  (app as unknown as { getPath: typeof routingPath }).getPath = routingPath;

  app.onError((err, c) => renderError(err, c));
  setRedispatch((request, env, ctx) => Promise.resolve(app.fetch(request, env, ctx)));
  app.notFound((c) => renderError(notFound(), c));

  // The order is the request flow of the README's architecture section.
  app.use("*", requestContext);
  app.use("*", apiCors);
  app.use("*", authenticate);
  app.use("*", trailingSlash);
  app.use("*", timeZone);
  app.use("*", jsonBodyLimit);
  app.use("*", rateLimit);
  app.use("*", strictJson);
  // After a successful write, hand new outbox events to webhooks and planned notifications to
  // their queue (the cron is the safety net).
  app.use("*", dispatchAfterWrites);
  // A fixed path's own methods, not its `/{id}/` sibling's (RFC 9110 §10.2.1; see fallback.ts).
  app.use("*", ownMethodsOnly(app, routingPath));

  // Components some bodies also use nullable (`X.nullable()`): registered first, as they are.
  // zod-to-openapi writes a component from its first use, so a nullable first use made the
  // component itself nullable everywhere; finishDocument writes the nullable uses as
  // `anyOf: [$ref, null]` (issue 46).
  app.openAPIRegistry.register("GeoPoint", GeoPointSchema);
  app.openAPIRegistry.register("Point", PointSchema);
  app.openAPIRegistry.register("Address", AddressSchema);
  app.openAPIRegistry.register("AddressInput", AddressInputSchema);
  app.openAPIRegistry.register("Contact", ContactSchema);
  // Likewise a component its uses describe each in their own words (before RecurrenceShortcut,
  // one of them), and RecurrenceShortcut, which orders use nullable.
  app.openAPIRegistry.register("TimeZone", TimeZoneSchema);
  app.openAPIRegistry.register("RecurrenceShortcut", RecurrenceShortcutSchema);

  mountMeta(app);
  mountAuth(app);
  // A new deployment's first admin comes before sign-up in the document's reading order.
  mountBootstrap(app);
  mountAccounts(app);
  mountUsers(app);
  mountAccountRoles(app);
  // Before the task's own paths: `auto_assign` is not a task id.
  mountAutoAssign(app);
  mountTasks(app);
  mountPod(app);
  mountOrders(app);
  mountContactAddresses(app);
  mountTaskCommands(app);
  mountPositions(app);
  mountFileUploads(app);
  mountAttachments(app);
  mountWebhooks(app);
  mountEvents(app);
  mountArchives(app);
  mountExports(app);
  mountImports(app);
  mountOutbox(app);
  mountMetafields(app);
  mountClients(app);
  mountRoutes(app);
  mountRouteOptimizations(app);
  mountTrackers(app);
  mountSms(app);
  mountNotificationTemplates(app);
  mountForms(app);
  mountFormFields(app);
  mountFormResponses(app);
  mountRecurrences(app);

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

  methodNotAllowedOr404(app, routingPath);
  return app;
}
