import { createRoute, z } from "@hono/zod-openapi";
import { fieldError } from "../../http/errors";
import { requireUser } from "../../http/guards";
import {
  batchValidationError,
  dateTime,
  dateTimeInput,
  defineRoute,
  ErrorSchema,
  errorResponses,
  jsonBody,
  jsonResponse,
  type Router,
  security,
} from "../../http/openapi";
import { DEFAULT_PAGE_SIZE, pageSchema, paginationQuery } from "../../http/pagination";
import { link, renderCtx, ts } from "../../http/serialize";
import { parseTimestamp } from "../../http/timezones";
import { hyperlinkSchema, parseHyperlink } from "../../http/urls";
import {
  listTrail,
  readTrailCursor,
  recordPositions,
  type TrailItem,
  trailCursor,
} from "../../services/positions";
import { PointSchema } from "../../services/task-commands";

const tags = ["Positions"];

const optionalNumber = (description: string, min: number, max: number) =>
  z.number().min(min).max(max).nullable().optional().openapi({ description });

export const PositionCreateSchema = z
  .object({
    location: PointSchema,
    time: dateTimeInput().openapi({
      description:
        "When the phone took the position (device time, ISO 8601). At most 5 minutes ahead of the server's clock.",
    }),
    accuracy_m: optionalNumber("Horizontal accuracy, metres (kept to 0.1 m).", 0, 100000),
    speed_mps: optionalNumber("Speed, metres per second (kept to 0.1 m/s).", 0, 1000),
    heading_deg: optionalNumber("Heading, degrees clockwise from true north (kept to 0.1°).", 0, 360),
  })
  .strict()
  .openapi("PositionCreate");

const MAX_POSITIONS = 500;

const PositionBodySchema = z
  .union([
    PositionCreateSchema,
    z.array(PositionCreateSchema).min(1).max(MAX_POSITIONS, "Too many positions: at most 500 per request."),
  ])
  .openapi(
    { description: "One position, or a list of up to 500 (a phone back online), in any order." },
    { unionPreferredType: "oneOf" },
  );

const PositionsAcceptedSchema = z
  .object({
    stored: z.number().int().openapi({ description: "Positions stored." }),
    dropped: z.number().int().openapi({
      description:
        "Positions dropped: closer in time than `POSITION_MIN_INTERVAL_SECONDS` (5) to a stored one of the same user (a resent batch is all dropped), or older than the account's `position_retention_days`.",
    }),
  })
  .openapi("PositionsAccepted");

export const PositionSchema = z
  .object({
    user: z.string().url(),
    location: PointSchema,
    time: dateTime(),
    accuracy_m: z.number().nullable(),
    speed_mps: z.number().nullable(),
    heading_deg: z.number().nullable(),
  })
  .openapi("Position");

export const createPositionRoute = createRoute({
  method: "post",
  path: "/positions/",
  operationId: "createPositions",
  tags,
  security,
  summary: "Send the caller's positions (any role, while on duty)",
  description:
    "The caller's own positions (contract §28). Stored only while the caller's role is `on_duty` (else 409 `off_duty`, nothing stored). " +
    "Batches may arrive late and out of order; each position lands in time order in the trail. A position closer in time than " +
    "`POSITION_MIN_INTERVAL_SECONDS` (5) to a stored one is dropped and counted, so a batch sent again changes nothing. " +
    "Kept to 1e-6 degree (about 0.1 m) and the millisecond. When the 202 comes, tasks' `eta` and `is_late`, re-plans from now and " +
    "auto-assign already start from the newest position sent (positions arriving within 0.25 s of each other share one write, so the " +
    "answer may wait up to that long).",
  request: jsonBody(PositionBodySchema),
  responses: {
    202: jsonResponse(PositionsAcceptedSchema, "Accepted: how many were stored and dropped."),
    ...errorResponses,
    400: batchValidationError,
    409: jsonResponse(ErrorSchema, "`off_duty`: the caller is off duty; nothing was stored."),
  },
});

const TrailQuery = z
  .object({
    ...paginationQuery,
    user: hyperlinkSchema(
      "users",
      "User URL or id (default: the caller). A worker may only name itself.",
    ).optional(),
    from: dateTimeInput().optional().openapi({ description: "Positions at or after this time." }),
    to: dateTimeInput().optional().openapi({ description: "Positions at or before this time." }),
  })
  .strict();

export const listPositionsRoute = createRoute({
  method: "get",
  path: "/positions/",
  operationId: "listPositions",
  tags,
  security,
  summary: "A user's trail, in time order",
  description:
    "Admins, managers and integration users read any user's of the account; a worker only its own (another user: 403). " +
    "Kept `position_retention_days` (account setting, default 7), then deleted.",
  request: { query: TrailQuery },
  responses: { 200: jsonResponse(pageSchema(PositionSchema), "A page of positions."), ...errorResponses },
});

export function mountPositions(app: Router) {
  defineRoute(app, createPositionRoute, async (c) => {
    const p = requireUser(c);
    const out = await recordPositions(c.env, p, c.req.valid("json"), c.get("baseUrl"), c.get("timeZone"));
    return c.json(out, 202);
  });

  defineRoute(app, listPositionsRoute, async (c) => {
    const p = requireUser(c);
    const q = c.req.valid("query");
    const zone = c.get("timeZone");
    const time = (name: "from" | "to") => {
      const v = q[name];
      if (v === undefined) return undefined;
      const t = parseTimestamp(v, zone);
      if (t === null) throw fieldError(name, "Datetime has wrong format. Use ISO 8601 with Z or an offset.");
      return t;
    };
    let userId = p.userId;
    if (q.user !== undefined) {
      const id = parseHyperlink(q.user, "users");
      if (!id) throw fieldError("user", "Invalid hyperlink - No URL match.");
      userId = id;
    }
    const cursor = q.cursor ? readTrailCursor(q.cursor) : null;
    const size = q.page_size ?? DEFAULT_PAGE_SIZE;
    const { items, more } = await listTrail(c.env, p, {
      userId,
      from: time("from") ?? 0,
      to: time("to") ?? Number.MAX_SAFE_INTEGER,
      cursor: cursor?.t ?? null,
      backwards: cursor?.backwards ?? false,
      size,
    });
    const r = renderCtx(c);
    const pageUrl = (t: number, backwards: boolean) => {
      const u = new URL(c.req.url);
      u.searchParams.set("cursor", trailCursor(t, backwards));
      return u.toString();
    };
    const first = items[0];
    const last = items[items.length - 1];
    const backwards = cursor?.backwards ?? false;
    // DRF's cursor pagination: `next` when there is more after the page, `previous` when the page follows another.
    const next = last && (backwards ? cursor !== null : more) ? pageUrl(last.time, false) : null;
    const previous = first && (backwards ? more : cursor !== null) ? pageUrl(first.time, true) : null;
    return c.json({
      next,
      previous,
      results: items.map((it: TrailItem) => ({
        user: link(r, "users", it.userId),
        location: { type: "Point" as const, coordinates: [it.lon, it.lat] as [number, number] },
        time: ts(r, it.time),
        accuracy_m: it.accuracy_m,
        speed_mps: it.speed_mps,
        heading_deg: it.heading_deg,
      })),
    });
  });
}
