import { createRoute, z } from "@hono/zod-openapi";
import { notFound } from "../../http/errors";
import { pathId, requireRole } from "../../http/guards";
import {
  type Ctx,
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
import { isUuid } from "../../lib/ids";
import {
  createWebhook,
  deleteWebhook,
  getDelivery,
  getWebhook,
  listDeliveries,
  listWebhooks,
  redeliver,
  updateWebhook,
} from "../../services/webhooks";
import {
  DeliveryListQuery,
  DeliverySchema,
  serializeDelivery,
  serializeWebhook,
  WebhookCreatedSchema,
  WebhookCreateSchema,
  WebhookPatchSchema,
  WebhookReplaceSchema,
  WebhookSchema,
} from "./schema";

const tags = ["Webhooks"];
/** Webhooks see every change of the account: the roles that act on the whole account (contract §2). */
const ROLES = ["admin", "manager", "integration"] as const;
const canManage = (c: Ctx) => requireRole(c, ...ROLES);

const deliveryParams = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, description: "Webhook UUID." }),
  delivery_id: z.string().openapi({
    param: { name: "delivery_id", in: "path" },
    description: "Delivery UUID (the `webhook-id`).",
  }),
});

function deliveryId(c: Ctx): string {
  const id = c.req.param("delivery_id");
  if (!id || !isUuid(id)) throw notFound();
  return id.toLowerCase();
}

const SIGNING =
  "Deliveries follow Standard Webhooks: POST with `webhook-id` (the delivery id, the same on every attempt), " +
  '`webhook-timestamp` (seconds), `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` ' +
  "keyed with the base64-decoded part of the secret after `whsec_`, and the body `{type, timestamp, data}`. " +
  "2xx is success; a 3xx is a failure (redirects are not followed); 15 s timeout; retries back off over about " +
  "three days (honouring a longer `Retry-After`); 410 Gone or the last failed attempt sets the webhook `failed`.";

export const createWebhookRoute = createRoute({
  method: "post",
  path: "/webhooks/",
  tags,
  security,
  summary: "Register a webhook (admins, managers, integrations)",
  description: `The response carries the signing \`secret\`, shown only here. ${SIGNING}`,
  request: jsonBody(WebhookCreateSchema),
  responses: {
    201: jsonResponse(WebhookCreatedSchema, "The webhook, with its secret."),
    ...errorResponses,
  },
});

export const listWebhooksRoute = createRoute({
  method: "get",
  path: "/webhooks/",
  tags,
  security,
  summary: "Webhooks of the account",
  request: { query: z.object(paginationQuery).strict() },
  responses: { 200: jsonResponse(pageSchema(WebhookSchema), "A page of webhooks."), ...errorResponses },
});

export const retrieveWebhookRoute = createRoute({
  method: "get",
  path: "/webhooks/{id}/",
  tags,
  security,
  summary: "Read a webhook (without its secret)",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(WebhookSchema, "The webhook."), ...errorResponses },
});

export const partialUpdateWebhookRoute = createRoute({
  method: "patch",
  path: "/webhooks/{id}/",
  tags,
  security,
  summary: "Change a webhook; `state: active` resumes a failed one",
  description:
    "Setting `state` to `active` on a failed webhook clears `failed_at` and `fail_message` and re-queues every " +
    "held or failed delivery, attempts counted from zero. Setting `failed` pauses it: new and pending deliveries are held.",
  request: { params: uuidParam, ...jsonBody(WebhookPatchSchema) },
  responses: { 200: jsonResponse(WebhookSchema, "The webhook."), ...errorResponses },
});

export const updateWebhookRoute = createRoute({
  method: "put",
  path: "/webhooks/{id}/",
  tags,
  security,
  summary: "Replace a webhook's settings (omitted `events` = all, omitted flag = false)",
  request: { params: uuidParam, ...jsonBody(WebhookReplaceSchema) },
  responses: { 200: jsonResponse(WebhookSchema, "The webhook."), ...errorResponses },
});

export const destroyWebhookRoute = createRoute({
  method: "delete",
  path: "/webhooks/{id}/",
  tags,
  security,
  summary: "Delete a webhook and its delivery log",
  request: { params: uuidParam },
  responses: { 204: { description: "Deleted; queued attempts are dropped." }, ...errorResponses },
});

export const listWebhookDeliveriesRoute = createRoute({
  method: "get",
  path: "/webhooks/{id}/deliveries/",
  tags,
  security,
  summary: "Delivery log of a webhook, newest first",
  request: { params: uuidParam, query: DeliveryListQuery.extend(paginationQuery).strict() },
  responses: {
    200: jsonResponse(pageSchema(DeliverySchema), "A page of deliveries."),
    ...errorResponses,
  },
});

export const retrieveWebhookDeliveryRoute = createRoute({
  method: "get",
  path: "/webhooks/{id}/deliveries/{delivery_id}/",
  tags,
  security,
  summary: "One delivery of a webhook",
  request: { params: deliveryParams },
  responses: { 200: jsonResponse(DeliverySchema, "The delivery."), ...errorResponses },
});

export const createWebhookDeliveryRedeliverRoute = createRoute({
  method: "post",
  path: "/webhooks/{id}/deliveries/{delivery_id}/redeliver/",
  tags,
  security,
  summary: "Send a delivery again (same `webhook-id`, attempts from zero)",
  description:
    "Any state. The webhook must be `active` (else 400: activating it resumes its held deliveries).",
  request: { params: deliveryParams },
  responses: {
    202: jsonResponse(DeliverySchema, "Queued; the delivery is `pending`."),
    ...errorResponses,
  },
});

export function mountWebhooks(app: Router) {
  defineRoute(app, createWebhookRoute, async (c) => {
    const p = canManage(c);
    const row = await createWebhook(c.env, p, c.req.valid("json"));
    return c.json(serializeWebhook(renderCtx(c), row, true), 201);
  });

  defineRoute(app, listWebhooksRoute, async (c) => {
    const p = canManage(c);
    const page = await listWebhooks(c.env, p.accountId, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    return c.json(mapPage(page, (w) => serializeWebhook(r, w)));
  });

  defineRoute(app, retrieveWebhookRoute, async (c) => {
    const p = canManage(c);
    return c.json(serializeWebhook(renderCtx(c), await getWebhook(c.env, p.accountId, pathId(c))));
  });

  defineRoute(app, partialUpdateWebhookRoute, async (c) => {
    const p = canManage(c);
    const row = await updateWebhook(c.env, p.accountId, pathId(c), c.req.valid("json"));
    return c.json(serializeWebhook(renderCtx(c), row));
  });

  defineRoute(app, updateWebhookRoute, async (c) => {
    const p = canManage(c);
    const body = c.req.valid("json");
    const row = await updateWebhook(c.env, p.accountId, pathId(c), {
      url: body.url,
      events: body.events ?? [],
      form_response_events: body.form_response_events ?? false,
      state: body.state,
    });
    return c.json(serializeWebhook(renderCtx(c), row));
  });

  defineRoute(app, destroyWebhookRoute, async (c) => {
    const p = canManage(c);
    await deleteWebhook(c.env, p.accountId, pathId(c));
    return c.body(null, 204);
  });

  defineRoute(app, listWebhookDeliveriesRoute, async (c) => {
    const p = canManage(c);
    const webhook = await getWebhook(c.env, p.accountId, pathId(c));
    const q = c.req.valid("query");
    const page = await listDeliveries(c.env, p.accountId, webhook.id, q, c.req.url);
    const r = renderCtx(c);
    return c.json(mapPage(page, (d) => serializeDelivery(r, d)));
  });

  defineRoute(app, retrieveWebhookDeliveryRoute, async (c) => {
    const p = canManage(c);
    const row = await getDelivery(c.env, p.accountId, pathId(c), deliveryId(c));
    return c.json(serializeDelivery(renderCtx(c), row));
  });

  defineRoute(app, createWebhookDeliveryRedeliverRoute, async (c) => {
    const p = canManage(c);
    const row = await redeliver(c.env, p.accountId, pathId(c), deliveryId(c));
    return c.json(serializeDelivery(renderCtx(c), row), 202);
  });
}
