import { createRoute, z } from "@hono/zod-openapi";
import { getPath } from "hono/utils/url";
import { methodNotAllowedOr404 } from "../apps/fallback";
import { TASK_STATES } from "../domain/task-state-machine";
import { ApiError, notFound, renderError } from "../http/errors";
import { anonymousCaller, publicCors, rateLimit, requestContext } from "../http/middleware";
import { createRouter, dateTime, defineRoute, ErrorSchema, jsonResponse } from "../http/openapi";
import { PUBLIC_PREFIX } from "../http/urls";
import { LIVE_SCRIPT } from "../render/live-script";
import { renderTrackerHtml } from "../render/tracker";
import { openTrackerStream } from "../services/live";
import { publicTracker, trackerToFollow } from "../services/trackers/public";

export { PUBLIC_PREFIX };

/**
 * The public page's policy (CSP Level 3): nothing but this page's own inline styles, the empty
 * `data:` icon it names (so no browser asks for /favicon.ico and logs a 404), and its one
 * same-origin script (/t/live.js), which may connect to this origin only (its stream and page).
 */
const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** One task as the public JSON shows it: only the tracker's allowlisted fields, nested by their dots. */
const PublicTaskSchema = z
  .object({
    state: z.enum(TASK_STATES),
    category: z.string(),
    description: z.string(),
    reference: z.string().nullable().openapi({ description: "The order's reference." }),
    address: z
      .object({
        formatted_address: z.string().nullable(),
        raw_address: z.string(),
        location: z
          .object({ type: z.literal("Point"), coordinates: z.array(z.number()).min(2).max(2) })
          .nullable(),
      })
      .partial(),
    complete_after: dateTime().nullable(),
    complete_before: dateTime().nullable(),
    scheduled_time: dateTime().nullable(),
    eta: dateTime().nullable().openapi({ description: "Estimated arrival, ISO 8601 UTC; null when none." }),
    predicted_delivery_error: z.string().nullable().openapi({
      description:
        "With `eta` listed: null when there is an ETA, else why not, one sentence in the negotiated language (not assigned, no location known, finished, outside the window).",
    }),
    assignee: z.object({ name: z.string() }).partial().nullable(),
    contact: z.object({ name: z.string() }).partial().nullable(),
  })
  .partial()
  .openapi("PublicTask", {
    description:
      "A task of a public tracker: exactly the fields of the tracker's `public_task_fields` (a dotted name such as `address.formatted_address` nested as `address: {formatted_address}`), and `predicted_delivery_error` when `eta` is listed.",
  });

const PublicTrackerSchema = z.object({ tasks: z.array(PublicTaskSchema) }).openapi("PublicTracker");

export const retrievePublicTrackerRoute = createRoute({
  method: "get",
  path: `${PUBLIC_PREFIX}/{token}/`,
  tags: ["Trackers"],
  security: [],
  summary: "The public tracking page of a tracker (its `public_url`), for the recipient",
  description:
    "No token: the 128 random bits in the URL are the capability. `Accept: application/json` (without `text/html`) " +
    "answers the JSON; anything else, a browser's `Accept` included, the HTML page (its one script, /t/live.js, keeps " +
    "it current over the tracker's stream within a second; with scripts off it reloads itself every 30 s), under a " +
    "strict `Content-Security-Policy` (`default-src 'none'`, `script-src 'self'`). Words and sentences are in the language of " +
    "`Accept-Language` (one of de, en, es, et, fi, fr, it, lt, lv, pl, ru, sv; else the account's `language`), named " +
    "in `Content-Language`. Expired, deleted and unknown trackers are the same 404. Outside the API: no `Accept` " +
    "version, no time zone (the JSON is UTC), rate limited per client address.",
  request: {
    params: z.object({
      token: z.string().openapi({
        param: { name: "token", in: "path" },
        description: "The last segment of the tracker's `public_url`.",
      }),
    }),
    headers: z.object({
      "accept-language": z
        .string()
        .optional()
        .openapi({ description: "RFC 9110 language preferences (`fi-FI,fi;q=0.9,en;q=0.5`)." }),
    }),
  },
  responses: {
    200: {
      description: "The tracker's tasks, as JSON or as the HTML page.",
      headers: {
        "Content-Language": {
          description: "The negotiated language.",
          required: true,
          schema: { type: "string" },
        },
      },
      content: {
        "application/json": { schema: PublicTrackerSchema },
        "text/html": { schema: z.string().openapi({ description: "The page, UTF-8." }) },
      },
    },
    404: jsonResponse(ErrorSchema, "No such tracker, or it expired or was deleted."),
    429: jsonResponse(ErrorSchema, "Throttled (per client address); see Retry-After."),
  },
});

export const liveScriptRoute = createRoute({
  method: "get",
  path: `${PUBLIC_PREFIX}/live.js`,
  operationId: "retrieveTrackerLiveScript",
  tags: ["Trackers"],
  security: [],
  summary: "The tracking page's script (keeps the page current over the tracker's stream)",
  responses: {
    200: {
      description: "JavaScript, same origin as the page (its CSP allows `script-src 'self'`).",
      content: { "text/javascript": { schema: z.string() } },
    },
  },
});

export const streamPublicTrackerRoute = createRoute({
  method: "get",
  path: `${PUBLIC_PREFIX}/{token}/stream/`,
  operationId: "streamPublicTracker",
  tags: ["Trackers"],
  security: [],
  summary: "The tracker's live stream (a WebSocket), which its page follows (contract §25)",
  description:
    '`Upgrade: websocket`. A message `{"type": "changed"}` when one of the tracker\'s tasks has an event, and ' +
    "nothing else: the page then reads itself again, so only what its allowlist shows ever reaches it. Expired, " +
    "deleted and unknown trackers are 404.",
  request: {
    params: z.object({
      token: z.string().openapi({ param: { name: "token", in: "path" }, description: "As in `public_url`." }),
    }),
  },
  responses: {
    101: { description: "Switching Protocols: the WebSocket." },
    404: jsonResponse(ErrorSchema, "No such tracker, or it expired or was deleted."),
    426: jsonResponse(ErrorSchema, "Not a WebSocket upgrade."),
    429: jsonResponse(ErrorSchema, "Throttled (per client address); see Retry-After."),
  },
});

/**
 * Recipients' pages (contract §17) as a sub-app of their own: no token, no API versions, any
 * origin, rate limited per client address, a strict CSP. `GET /t/<token>/`: JSON with
 * `Accept: application/json`, else the HTML page.
 */
export function createPublicApp() {
  const app = createRouter();
  app.onError((err, c) => renderError(err, c));
  app.notFound((c) => renderError(notFound(), c));
  app.use("*", requestContext);
  app.use("*", publicCors);
  app.use("*", anonymousCaller);
  app.use("*", rateLimit);
  // The page's script: keeps the page current over the tracker's stream (src/render/live-script.ts).
  defineRoute(app, liveScriptRoute, (c) =>
    c.body(LIVE_SCRIPT, 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": "public, max-age=300",
    }),
  );
  // The tracker's stream (contract §25): `changed` when one of its tasks has news, nothing else.
  defineRoute(app, streamPublicTrackerRoute, async (c) => {
    const token = c.req.param("token");
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(token)) throw notFound();
    const tracker = await trackerToFollow(c.env, token);
    if (c.req.header("Upgrade")?.toLowerCase() !== "websocket")
      throw new ApiError(426, "upgrade_required", "This is a WebSocket: send `Upgrade: websocket`.");
    return openTrackerStream(c.env, tracker);
  });
  defineRoute(app, retrievePublicTrackerRoute, async (c) => {
    const token = c.req.param("token");
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(token)) throw notFound();
    const view = {
      ...(await publicTracker(c.env, token, c.req.header("Accept-Language"))),
      streamPath: `${PUBLIC_PREFIX}/${token}/stream/`,
    };
    const wantsJson =
      /\bapplication\/json\b/i.test(c.req.header("Accept") ?? "") &&
      !/\btext\/html\b/i.test(c.req.header("Accept") ?? "");
    const headers = {
      "Content-Language": view.language,
      Vary: "Accept, Accept-Language",
      "Cache-Control": "no-store",
    };
    if (wantsJson) return c.json({ tasks: view.tasks.map((t) => t.fields) }, 200, headers);
    return c.body(renderTrackerHtml(view), 200, {
      ...headers,
      "Content-Type": "text/html; charset=utf-8",
      "Content-Security-Policy": PAGE_CSP,
      "Referrer-Policy": "no-referrer",
    });
  });
  // `/t/<token>` without its slash is 404, as every unknown path (the API's slash rule).
  methodNotAllowedOr404(app, getPath);
  return app;
}
