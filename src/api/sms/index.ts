import { createRoute, z } from "@hono/zod-openapi";
import { authenticationFailed } from "../../http/errors";
import { pathId, requireRole } from "../../http/guards";
import {
  dateTime,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonResponse,
  NOT_BLANK,
  type Router,
  security,
  uuidParam,
} from "../../http/openapi";
import { mapPage, pageSchema, paginationQuery } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import { hyperlinkSchema } from "../../http/urls";
import { twilioSignature } from "../../services/messaging/sms";
import {
  createSms,
  E164,
  getSms,
  listSms,
  MAX_SMS_LENGTH,
  recordSmsStatus,
  resendSms,
  serializeSms,
} from "../../services/sms";

const tags = ["SMS"];
const SENDERS = ["admin", "manager", "integration"] as const;

export const SmsSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    account: z.string().url(),
    to: z.string(),
    message: z.string(),
    task: z.string().url().nullable(),
    state: z.enum(["queued", "sent", "delivered", "failed"]),
    provider: z.string(),
    provider_message_id: z.string().nullable(),
    error_message: z.string(),
    sent_at: dateTime().nullable(),
    created_by: z.string().url().nullable(),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("Sms");

const SmsWriteSchema = z
  .object({
    // Checked by the service (services/sms) with its own messages; stated here as JSON Schema.
    to: z.string().openapi({ description: "E.164, e.g. `+358401234567`.", pattern: E164.source }),
    message: z.string().openapi({
      description: "Not blank; at most 1,600 characters.",
      maxLength: MAX_SMS_LENGTH,
      pattern: NOT_BLANK,
    }),
    task: hyperlinkSchema("tasks", "Task URL (optional).", { blank: true }).nullable().optional(),
  })
  .openapi("SmsCreate");

export const createSmsRoute = createRoute({
  method: "post",
  path: "/sms/",
  tags,
  security,
  summary: "Send an SMS (queued)",
  description:
    "201 and queued. The same account, phone and message within SMS_DUPLICATE_SEND_WINDOW_SECONDS (300): 200 with the existing SMS, nothing sent.",
  request: jsonBody(SmsWriteSchema),
  responses: {
    200: jsonResponse(SmsSchema, "A duplicate: the existing SMS."),
    201: jsonResponse(SmsSchema, "Queued."),
    ...errorResponses,
  },
});

export const listSmsRoute = createRoute({
  method: "get",
  path: "/sms/",
  tags,
  security,
  summary: "List SMS, newest first",
  request: { query: z.object(paginationQuery).strict() },
  responses: { 200: jsonResponse(pageSchema(SmsSchema), "A page of SMS."), ...errorResponses },
});

export const retrieveSmsRoute = createRoute({
  method: "get",
  path: "/sms/{id}/",
  tags,
  security,
  summary: "Read an SMS",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(SmsSchema, "The SMS."), ...errorResponses },
});

export const resendSmsRoute = createRoute({
  method: "post",
  path: "/sms/{id}/resend/",
  operationId: "resendSms",
  tags,
  security,
  summary: "Send the same SMS again, always (a fresh SMS)",
  request: { params: uuidParam },
  responses: { 201: jsonResponse(SmsSchema, "The new SMS, queued."), ...errorResponses },
});

export const statusSmsRoute = createRoute({
  method: "post",
  path: "/sms/status/",
  operationId: "statusSms",
  tags,
  security: [],
  summary: "Delivery receipts from the SMS provider (Twilio status callbacks, signed)",
  description:
    "Form-encoded `MessageSid`, `MessageStatus` (and `ErrorCode`), with `X-Twilio-Signature` checked against TWILIO_AUTH_TOKEN; a bad or missing signature is 401.",
  request: {
    query: z.object({
      account: z.string().uuid().optional().openapi({
        description:
          "The account the message was sent for, as this service wrote it into the callback URL it gave the provider (covered by the signature): the receipt is then recorded in that account's database alone (contract §24).",
      }),
    }),
    headers: z.object({
      "x-twilio-signature": z
        .string()
        .optional()
        .openapi({ description: "Twilio's request signature (without a valid one: 401)." }),
    }),
    body: {
      content: {
        "application/x-www-form-urlencoded": {
          schema: z.object({
            MessageSid: z.string(),
            MessageStatus: z.string(),
            ErrorCode: z.string().optional(),
          }),
        },
      },
    },
  },
  responses: { 204: { description: "Recorded." }, ...errorResponses },
});

export function mountSms(app: Router) {
  // Registered before /sms/{id}/ routes: `status` is not an id.
  app.openapi(statusSmsRoute, (async (c: Parameters<Parameters<typeof defineRoute>[2]>[0]) => {
    const raw = await c.req.text();
    const params = new URLSearchParams(raw);
    const token = c.env.TWILIO_AUTH_TOKEN;
    const given = c.req.header("X-Twilio-Signature") ?? "";
    const expected = token ? await twilioSignature(token, c.req.url, params) : null;
    if (!expected || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw authenticationFailed("Invalid request signature.");
    }
    await recordSmsStatus(
      c.env,
      params.get("MessageSid") ?? "",
      params.get("MessageStatus") ?? "",
      params.get("ErrorCode"),
      c.req.query("account") ?? null,
    );
    return c.body(null, 204);
  }) as never);

  defineRoute(app, createSmsRoute, async (c) => {
    const p = requireRole(c, ...SENDERS);
    const { row, created } = await createSms(c.env, p, c.req.valid("json"), c.get("baseUrl"));
    return c.json(serializeSms(renderCtx(c), row), created ? 201 : 200);
  });
  defineRoute(app, listSmsRoute, async (c) => {
    const p = requireRole(c, ...SENDERS);
    const page = await listSms(c.env.DB, p, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    return c.json(mapPage(page, (s) => serializeSms(r, s)));
  });
  defineRoute(app, retrieveSmsRoute, async (c) => {
    const p = requireRole(c, ...SENDERS);
    return c.json(serializeSms(renderCtx(c), await getSms(c.env.DB, p, pathId(c))));
  });
  defineRoute(app, resendSmsRoute, async (c) => {
    const p = requireRole(c, ...SENDERS);
    const { row } = await resendSms(c.env, p, pathId(c), c.get("baseUrl"));
    return c.json(serializeSms(renderCtx(c), row), 201);
  });
}

/** Compares two equal-length strings in time independent of where they differ. */
function timingSafeEqual(a: string, b: string): boolean {
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
