/**
 * The finishing pass over the document @hono/zod-openapi generates from the route schemas
 * (the same zod schemas that validate). What is the same for every operation is added here,
 * once, rather than by hand per route: operation ids, the answers every operation can give
 * (405, 413, 415, 500...), the response and request headers, anonymous security, the examples
 * (request examples written for a reader to try in document order; answers recorded from the
 * service, see openapi-examples.ts), the reading order of the paths, and the OpenAPI 3.1
 * `webhooks`. The schemas themselves are never rewritten, except that tuples also get
 * `items` + `minItems`/`maxItems` (tools mishandle a bare `prefixItems`), and a nullable use of a
 * component is written `anyOf: [$ref, null]` (zod-to-openapi writes `allOf: [$ref, {type: [..,
 * "null"]}]`, which no null satisfies): openapi-schemas.ts.
 */
import { EVENT_TYPES, type EventType } from "../services/events/outbox";
import { errorResponses } from "./openapi";
import { exampleEntries, REQUEST_EXAMPLES, RESPONSE_EXAMPLES } from "./openapi-examples";
import { API_DESCRIPTION, TAGS } from "./openapi-notes";
import { nullableRefs, PART_FIVE_EVENTS, plainTuples } from "./openapi-schemas";
import { FILES_PREFIX, isDocsPath, PUBLIC_PREFIX, STORAGE_PREFIX } from "./urls";

type Json = any;
type Doc = Json;

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

/** Ids of the operations that are not plain create/list/retrieve/update/destroy. */
const ACTION_IDS: Record<string, string> = {
  "post /authenticate/": "authenticate",
  "post /logout/": "logout",
  "post /session_tokens/refresh/": "refreshSessionToken",
  "post /session_tokens/authorize/": "authorizeSessionToken",
  "get /users/me/": "retrieveCurrentUser",
  "post /documents/batch_delete/": "batchDeleteDocuments",
  "post /signatures/batch_delete/": "batchDeleteSignatures",
  "post /webhooks/{id}/deliveries/{delivery_id}/redeliver/": "redeliverWebhookDelivery",
  "get /": "retrieveApiRoot",
  "get /openapi.json": "retrieveOpenApiDocument",
  "get /docs/": "retrieveDocsPage",
  "get /console/": "retrieveConsolePage",
  "get /app/": "retrieveFieldAppPage",
  "get /t/{token}/": "retrievePublicTracker",
  "get /health/": "retrieveHealth",
  "post /bootstrap/": "bootstrapFirstAdmin",
  // "sms" is its own plural: not "createSm".
  "post /sms/": "createSms",
  "get /sms/": "listSms",
  "get /sms/{id}/": "retrieveSms",
};

const singular = (word: string) =>
  word.endsWith("ies")
    ? `${word.slice(0, -3)}y`
    : word.endsWith("sses")
      ? word.slice(0, -2)
      : word.replace(/s$/, "");
const pascal = (word: string) =>
  word
    .split("_")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");

/**
 * Django REST framework's action names, which clients generated from DRF schemas know:
 * `listTasks`, `createTask`, `retrieveTask`, `partialUpdateTask`, `updateTask`, `destroyTask`.
 */
export function operationIdFor(method: string, path: string): string {
  const explicit = ACTION_IDS[`${method} ${path}`];
  if (explicit) return explicit;
  const segments = path.split("/").filter(Boolean);
  const item = segments[segments.length - 1].startsWith("{");
  const names = segments.filter((s) => !s.startsWith("{"));
  const verb = item
    ? { get: "retrieve", patch: "partialUpdate", put: "update", delete: "destroy" }[method]
    : { get: "list", post: "create" }[method];
  if (!verb) throw new Error(`OpenAPI: no operationId rule for ${method.toUpperCase()} ${path}`);
  const plural = !item && method === "get";
  return verb + names.map((n, i) => pascal(plural && i === names.length - 1 ? n : singular(n))).join("");
}

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const header = (description: string, schema: Json, example?: unknown, required?: true) => ({
  description,
  ...(required ? { required } : {}),
  schema: example === undefined ? schema : { ...schema, examples: [example] },
});

/** Response headers (components.headers), referenced from every response they come with. */
const HEADERS = {
  // Set by the first middleware of every sub-app (src/http/middleware.ts `requestContext`), after
  // the handler or the error handler answered: on every response of this document (contract §1).
  "X-Request-Id": header(
    "This request's id (the one sent in `X-Request-Id` if it was 8–128 characters of `[A-Za-z0-9_.-]`). Quote it when reporting a problem.",
    { type: "string" },
    "7d0f8e1c-4a8e-4a53-9b55-0f7c2b7d3c11",
    true,
  ),
  "X-API-Version": header(
    "The API version this request was served with (outside the versioned API: the declared one, else the current one).",
    { type: "string" },
    "2.11.4",
    true,
  ),
  // Also set by `requestContext`, once the request ran a D1 query (contract §24; docs/api.md).
  "X-D1-Bookmark": header(
    "The D1 sessions' bookmarks after this request (its own writes included, a Durable Object's too), each tagged with the database it belongs to: `<database>:<bookmark>` (`DB` the directory, `SHARD_<n>` an account's shard), comma-separated when the request used two. Send the latest one you received back in `X-D1-Bookmark` and the next request reads at least what this one wrote. Absent when the request used no database.",
    { type: "string", pattern: "^(DB|SHARD_[0-9]+):[0-9A-Fa-f-]+(, (DB|SHARD_[0-9]+):[0-9A-Fa-f-]+)*$" },
    "SHARD_0:0000002c-00000007-00004f6e-9b0e4fbd9e0a1b4d2c8f6e1a3b5c7d9e",
  ),
  "RateLimit-Policy": header(
    'IETF draft-ietf-httpapi-ratelimit-headers: the policy, `"default";q=<requests>;w=<window in seconds>`.',
    { type: "string" },
    '"default";q=20;w=1',
  ),
  RateLimit: header(
    'IETF draft-ietf-httpapi-ratelimit-headers: `"default";r=<remaining>;t=<seconds until the window resets>`.',
    { type: "string" },
    '"default";r=19;t=1',
  ),
  "RateLimit-Limit": header("Earlier draft field, kept for existing clients: requests per window.", {
    type: "integer",
  }),
  "RateLimit-Remaining": header(
    "Earlier draft field, kept for existing clients: requests left in the window.",
    {
      type: "integer",
    },
  ),
  "RateLimit-Reset": header(
    "Earlier draft field, kept for existing clients: seconds until the window resets.",
    {
      type: "integer",
    },
  ),
  "Retry-After": header("Seconds to wait before retrying (RFC 9110).", { type: "integer" }, 1),
  Allow: header("The methods this path accepts (RFC 9110).", { type: "string" }, "GET, HEAD, PATCH"),
  "WWW-Authenticate": header(
    "The authentication scheme to use (RFC 9110).",
    { type: "string" },
    'Bearer realm="api"',
  ),
  Location: header("The stored file's URL.", { type: "string", format: "uri" }),
  ETag: header("The stored object's entity tag.", { type: "string" }),
};
/** On every response. */
const COMMON_HEADERS = ["X-Request-Id", "X-API-Version"];
/** On every response whose request read or wrote the database (optional, as it may be absent). */
const SESSION_HEADERS = ["X-D1-Bookmark"];
/**
 * On every response the limiter counted: not on errors answered before counting (an invalid
 * token, version or time zone), and never for stored files. Optional, as OpenAPI headers are.
 */
const RATE_LIMIT_HEADERS = [
  "RateLimit-Policy",
  "RateLimit",
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
];

/** Request headers every API operation understands (components.parameters). */
const PARAMETERS = {
  Accept: {
    name: "Accept",
    in: "header",
    required: false,
    description:
      "The API version to use: `application/json; version=X.Y.Z`. Without it: your account's pinned version, else the newest. An unknown version is 400 `not_acceptable_version`.",
    schema: { type: "string", examples: ["application/json; version=2.11.4"] },
  },
  "Accept-Timezone": {
    name: "Accept-Timezone",
    in: "header",
    required: false,
    description:
      "An IANA time zone: timestamps are rendered with its offset, and local times without an offset are read in it. An unknown zone is 400 `invalid_timezone`.",
    // The names the service takes, as accounts and recurrences state them (issue 56): a tool
    // that generates this header from `{type: string}` sends zones that are 400.
    schema: ref("schemas", "TimeZone"),
    example: "Europe/Helsinki",
  },
  "X-D1-Bookmark": {
    name: "X-D1-Bookmark",
    in: "header",
    required: false,
    description:
      "The latest `X-D1-Bookmark` you received: this request then reads at least what that answer had written, on each database it names that this request uses (D1 read replication). Without it, a read may come from a replica a moment behind. Any value is accepted: an entry of another database (another shard, an account since moved), an untagged or malformed one is ignored, never refused and never echoed.",
    schema: { type: "string" },
  },
  "X-Request-Id": {
    name: "X-Request-Id",
    in: "header",
    required: false,
    description:
      "Your id for this request, echoed back if it is 8–128 characters of `[A-Za-z0-9_.-]`; any other value is accepted and replaced by one the service makes.",
    schema: { type: "string" },
  },
};

const headerRefs = (names: string[]) => Object.fromEntries(names.map((h) => [h, ref("headers", h)]));
const errorResponse = (description: string, example: Json, headers: string[] = []) => ({
  description,
  headers: headerRefs([...COMMON_HEADERS, ...SESSION_HEADERS, ...RATE_LIMIT_HEADERS, ...headers]),
  content: { "application/json": { schema: ref("schemas", "Error"), example } },
});

/** Answers any API operation can give, whatever its handler does (components.responses). */
const RESPONSES = {
  ValidationFailed: {
    description: "Validation error: a field map (contract §3).",
    headers: headerRefs([...COMMON_HEADERS, ...SESSION_HEADERS, ...RATE_LIMIT_HEADERS]),
    content: {
      "application/json": {
        schema: ref("schemas", "ValidationError"),
        example: { account: ["This field is required."], address: { raw_address: ["Not a valid string."] } },
      },
    },
  },
  NotAuthenticated: errorResponse(
    "No token where one is needed, or an invalid, expired or revoked one.",
    { detail: "Authentication credentials were not provided.", code: "not_authenticated" },
    ["WWW-Authenticate"],
  ),
  PermissionDenied: errorResponse("The caller's role does not allow it.", {
    detail: "You do not have permission to perform this action.",
    code: "permission_denied",
  }),
  NotFound: errorResponse(
    "No such object in the caller's account (another account's objects are not found either).",
    {
      detail: "Not found.",
      code: "not_found",
    },
  ),
  Throttled: errorResponse(
    "Over the rate limit (per token; anonymous callers per client address).",
    { detail: "Request was throttled. Expected available in 1 second(s).", code: "throttled" },
    ["Retry-After"],
  ),
  // Every sub-app reads the version in `Accept` before its routes (middleware.ts); the API and
  // storage also read `Accept-Timezone`: an operation with no 400 of its own still answers these.
  BadRequestHeader: errorResponse(
    "A request header the service cannot take: an unknown or malformed version in `Accept` (`not_acceptable_version`), or an unknown zone in `Accept-Timezone` where the operation takes it (`invalid_timezone`).",
    {
      detail: 'Invalid version in "Accept" header: "9.9.9". Known versions: 1.0.0 to 2.11.4.',
      code: "not_acceptable_version",
    },
  ),
  MethodNotAllowed: errorResponse(
    "The path exists but not with this method; `Allow` lists the methods it has.",
    { detail: 'Method "PUT" not allowed.', code: "method_not_allowed" },
    ["Allow"],
  ),
  RequestTooLarge: errorResponse("The JSON body is larger than 10 MiB.", {
    detail: "Request body is larger than 10485760 bytes.",
    code: "request_too_large",
  }),
  UnsupportedMediaType: errorResponse("The body is not `application/json`.", {
    detail: "Unsupported Media Type",
    code: "unsupported_media_type",
  }),
  Conflict: errorResponse("The object kept changing while this write was made; send it again.", {
    detail: "The task kept changing while it was written; try again.",
    code: "conflict",
  }),
  ServerError: {
    description:
      "An unexpected error. The body and `X-Request-Id` carry the request id; nothing internal is shown.",
    headers: headerRefs([...COMMON_HEADERS, ...SESSION_HEADERS, ...RATE_LIMIT_HEADERS]),
    content: {
      "application/json": {
        schema: {
          allOf: [
            ref("schemas", "Error"),
            { type: "object", properties: { request_id: { type: "string" } }, required: ["request_id"] },
          ],
        },
        example: {
          detail: "A server error occurred. Request id: 7d0f8e1c-4a8e-4a53-9b55-0f7c2b7d3c11.",
          code: "server_error",
          request_id: "7d0f8e1c-4a8e-4a53-9b55-0f7c2b7d3c11",
        },
      },
    },
  },
};

/**
 * The route configs spread `errorResponses` (src/http/openapi.ts) into every operation; each such
 * answer, unchanged, becomes a reference to one shared response (OpenAPI 3.1 components.responses),
 * which keeps the document and the clients generated from it a fraction of the size.
 */
const SHARED_ERRORS: Record<string, { description: string; schema: string; component: string }> = {
  "400": {
    description: errorResponses[400].description,
    schema: "ValidationError",
    component: "ValidationFailed",
  },
  "401": { description: errorResponses[401].description, schema: "Error", component: "NotAuthenticated" },
  "403": { description: errorResponses[403].description, schema: "Error", component: "PermissionDenied" },
  "404": { description: errorResponses[404].description, schema: "Error", component: "NotFound" },
  "429": { description: errorResponses[429].description, schema: "Error", component: "Throttled" },
};

function shareErrors(responses: Json) {
  for (const [status, shared] of Object.entries(SHARED_ERRORS)) {
    const r = responses[status];
    const types = Object.keys(r?.content ?? {});
    if (
      r &&
      !r.$ref &&
      !r.headers &&
      r.description === shared.description &&
      types.length === 1 &&
      r.content["application/json"]?.schema?.$ref === `#/components/schemas/${shared.schema}`
    ) {
      responses[status] = ref("responses", shared.component);
    }
  }
}

/** Operations that answer 409 (writes to a task retried against concurrent writers). */
const CONFLICTS = new Set(["updateTask", "partialUpdateTask", "destroyTask"]);

/**
 * The sub-app a path belongs to (src/app.ts), which decides what its answers carry: the API
 * (versions, time zones, JSON errors, rate limits), the upload endpoint and the stored files
 * (S3's XML errors; files are not rate limited), the docs, and the recipients' public pages.
 */
export type PathKind = "api" | "storage" | "files" | "docs" | "public";
export function pathKind(path: string): PathKind {
  if (path.startsWith(`${FILES_PREFIX}/`)) return "files";
  if (path === `${STORAGE_PREFIX}/`) return "storage";
  if (path.startsWith(`${PUBLIC_PREFIX}/`)) return "public";
  return isDocsPath(path) ? "docs" : "api";
}

function addHeaders(response: Json, names: string[]) {
  if (response.$ref) return;
  response.headers ??= {};
  for (const name of names) response.headers[name] ??= ref("headers", name);
}

/** One example (`example`) or several, named (`examples`), on a media type object. */
function setExamples(media: Json, entries: [string, unknown][]) {
  if (!media || media.example !== undefined || media.examples !== undefined || entries.length === 0) return;
  if (entries.length === 1) media.example = entries[0][1];
  else
    media.examples = Object.fromEntries(
      entries.map(([summary, value], i) => [`example${i + 1}`, { summary, value }]),
    );
}

function finishOperation(path: string, method: string, op: Json) {
  op.operationId ??= operationIdFor(method, path);
  // Anonymous operations say so: with a top-level `security`, leaving it out would mean "token needed".
  op.security ??= [];
  const kind = pathKind(path);
  const responses = op.responses;
  shareErrors(responses);
  // What each sub-app's middleware reads (src/apps/*.ts): the version everywhere, the time zone
  // in the API and storage.
  const readsTimeZone = kind === "api" || kind === "storage" || kind === "files";
  op.parameters = [
    ...(op.parameters ?? []),
    ref("parameters", "Accept"),
    ...(readsTimeZone ? [ref("parameters", "Accept-Timezone")] : []),
    ref("parameters", "X-Request-Id"),
    ref("parameters", "X-D1-Bookmark"),
  ];
  responses["400"] ??= ref("responses", "BadRequestHeader");
  if (kind !== "files" && kind !== "storage") responses["405"] ??= ref("responses", "MethodNotAllowed");
  if (kind !== "files" && kind !== "api") responses["429"] ??= ref("responses", "Throttled");
  if (kind === "api" && op.requestBody?.content?.["application/json"]) {
    responses["413"] ??= ref("responses", "RequestTooLarge");
    responses["415"] ??= ref("responses", "UnsupportedMediaType");
  }
  if (CONFLICTS.has(op.operationId)) responses["409"] ??= ref("responses", "Conflict");
  if (kind !== "storage") responses["500"] ??= ref("responses", "ServerError");

  for (const [type, media] of Object.entries<Json>(op.requestBody?.content ?? {})) {
    if (type === "application/json") setExamples(media, exampleEntries(REQUEST_EXAMPLES[op.operationId]));
  }
  for (const [status, response] of Object.entries<Json>(responses)) {
    for (const [type, media] of Object.entries<Json>(response.content ?? {})) {
      setExamples(media, Object.entries(RESPONSE_EXAMPLES[op.operationId]?.[status]?.[type] ?? {}));
    }
    // Stored files are not counted by the rate limiter; everything else is.
    addHeaders(
      response,
      kind === "files"
        ? [...COMMON_HEADERS, ...SESSION_HEADERS]
        : [...COMMON_HEADERS, ...SESSION_HEADERS, ...RATE_LIMIT_HEADERS],
    );
    if (status === "429") addHeaders(response, ["Retry-After"]);
    if (status === "401") addHeaders(response, ["WWW-Authenticate"]);
    if (kind === "storage" && /^(20[014]|303)$/.test(status)) addHeaders(response, ["ETag", "Location"]);
  }
}

/**
 * The reading order (Swagger UI and Redoc list operations in document order): by tag in the
 * order of `TAGS`, a reader's order (sign up, add people, define metafields, then tasks, ...);
 * within a tag a collection first, then its objects, their actions, and the collection's own
 * actions. The request examples are written to succeed when tried in this order on a new
 * account (test/openapi checks it).
 */
function readingOrder(paths: Json): Json {
  const tagIndex = new Map(TAGS.map((t, i) => [t.name, i]));
  const firstSegment = new Map<string, number>();
  const entries = Object.entries<Json>(paths).map(([path, item], index) => {
    const op = METHODS.map((m) => item[m]).find(Boolean);
    const segs = path.split("/").filter(Boolean);
    if (!firstSegment.has(segs[0] ?? "")) firstSegment.set(segs[0] ?? "", firstSegment.size);
    const objectLike = (s: string | undefined) => !!s && (s.startsWith("{") || s === "me");
    const group = segs.length <= 1 ? 0 : objectLike(segs[1]) ? (segs.length === 2 ? 1 : 2) : 3;
    const key = [tagIndex.get(op?.tags?.[0]) ?? TAGS.length, firstSegment.get(segs[0] ?? "")!, group, index];
    return { path, item, key };
  });
  entries.sort((x, y) => {
    for (let i = 0; i < x.key.length; i++) if (x.key[i] !== y.key[i]) return x.key[i] - y.key[i];
    return 0;
  });
  return Object.fromEntries(entries.map((e) => [e.path, e.item]));
}

/** What each event's `data` is (services/events: the object as the API renders it). */
function eventData(type: EventType): { schema: Json; about: string } {
  const [object] = type.split(".");
  if (type === "task.late" || type === "task.auto_assign_failed") return PART_FIVE_EVENTS[type];
  switch (object) {
    case "worker":
      return PART_FIVE_EVENTS["worker.duty_changed"];
    case "task":
      return { schema: ref("schemas", "Task"), about: "`data` is the task as `GET /tasks/{id}/` renders it" };
    case "task_command":
      return {
        schema: ref("schemas", "TaskCommandEvent"),
        about: "`data` is the command as `GET /task_commands/{id}/` renders it, with its `task` inline",
      };
    case "order":
      return {
        schema: ref("schemas", "Order"),
        about: "`data` is the order as `GET /orders/{id}/` renders it",
      };
    case "document":
    case "signature":
      return {
        schema: ref("schemas", "AttachmentEvent"),
        about: `\`data\` is the ${object} as \`GET /${object}s/{id}/\` renders it, with its \`task\` inline (a URL if the task is gone)`,
      };
    default:
      return {
        schema: { type: "object" },
        about:
          "Sent to the webhooks with `form_response_events: true`, whatever their `events` list says, and to no other (contract §15). `data` is the form response as `GET /form_responses/{id}/` renders it (its `schema_snapshot` included), with its `task` inline (null when it has none)",
      };
  }
}

const VERIFY = `
Delivery follows [Standard Webhooks](https://www.standardwebhooks.com/): an HTTPS POST of
\`{"type", "timestamp", "data"}\` with three headers, \`webhook-id\` (the delivery's id, the same on every
attempt: deduplicate on it), \`webhook-timestamp\` (Unix seconds of this attempt) and
\`webhook-signature\` (\`v1,<base64 HMAC-SHA256>\`). To verify: decode the webhook's \`secret\` after its
\`whsec_\` prefix from base64, compute HMAC-SHA256 with it over \`<webhook-id>.<webhook-timestamp>.<raw body>\`,
base64 the result and compare it, in constant time, with each space-separated \`v1,\` entry of
\`webhook-signature\`; reject timestamps more than a few minutes old. Any Standard Webhooks library does
this (\`new Webhook(secret).verify(body, headers)\`). Answer 2xx within 15 seconds; anything else, a
redirect or a timeout is retried; 410 Gone disables the webhook.`.trim();

const DELIVERY_HEADERS = [
  {
    name: "webhook-id",
    in: "header",
    required: true,
    description: "The delivery's id, the same on every attempt (deduplicate on it).",
    schema: { type: "string" },
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description: "This attempt's time, in Unix seconds.",
    schema: { type: "integer" },
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    description:
      'Space-separated signatures, `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`.',
    schema: { type: "string" },
  },
  {
    name: "x-event-id",
    in: "header",
    required: true,
    description: "The event's id (as in `GET /events/{id}/`).",
    schema: { type: "string", format: "uuid" },
  },
];

function webhooks(): Json {
  const out: Json = {};
  for (const type of EVENT_TYPES) {
    const { schema, about } = eventData(type);
    out[type] = {
      post: {
        operationId: `${type.replace(/[._](\w)/g, (_, c: string) => c.toUpperCase())}Webhook`,
        tags: ["Webhooks"],
        summary: `Event \`${type}\``,
        description: `${about}.\n\n${VERIFY}`,
        security: [],
        parameters: DELIVERY_HEADERS,
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["type", "timestamp", "data"],
                properties: {
                  type: { type: "string", const: type },
                  timestamp: { type: "string", format: "date-time", description: "When the event happened." },
                  data: schema,
                },
              },
            },
          },
        },
        responses: {
          "2XX": { description: "Received. Any 2xx ends the delivery." },
          "410": { description: "Gone: the webhook is set `failed` and its deliveries are held." },
        },
      },
    };
  }
  return out;
}

/** Event payloads that inline the task where the API answer has its URL. */
function eventSchemas(schemas: Json) {
  schemas.TaskCommandEvent = {
    description: "A task command with its task inline, as events carry it.",
    allOf: [ref("schemas", "TaskCommand"), { type: "object", properties: { task: ref("schemas", "Task") } }],
  };
  const doc = schemas.Document;
  schemas.AttachmentEvent = {
    ...doc,
    description:
      "A document or signature with its task inline (its URL if the task was deleted), as events carry it.",
    properties: {
      ...doc.properties,
      task: { oneOf: [ref("schemas", "Task"), { type: "string", format: "uri" }] },
    },
  };
}

/** Completes the generated document; `servers` is left to the caller (it is per request). */
export function finishDocument(doc: Doc): Doc {
  doc.info.description = API_DESCRIPTION;
  // The service's licence (LICENSE), by its SPDX identifier: OpenAPI 3.1 §4.8.4 takes
  // `identifier` or `url`, not both.
  doc.info.license = { name: "Apache-2.0", identifier: "Apache-2.0" };
  doc.tags = TAGS;
  doc.security = [{ Bearer: [] }, { Token: [] }];
  doc.components ??= {};
  doc.components.headers = { ...HEADERS };
  doc.components.parameters = { ...doc.components.parameters, ...PARAMETERS };
  doc.components.responses = { ...doc.components.responses, ...RESPONSES };
  eventSchemas(doc.components.schemas);
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const method of METHODS) if (item[method]) finishOperation(path, method, item[method]);
  }
  doc.paths = readingOrder(doc.paths);
  doc.webhooks = webhooks();
  plainTuples(doc);
  nullableRefs(doc);
  return doc;
}
