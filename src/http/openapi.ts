import { OpenAPIHono, type RouteConfig, type RouteHandler, z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";
import { ERROR_CODES, type FieldErrors, ValidationError } from "./errors";
import { type FirstBatchMode, markFirstBatch } from "./first-batch";
import { DAY_PATTERN, timestampPattern } from "./timezones";

type Issue = z.core.$ZodIssue;

/** The raw value at an issue's path (zod 4 issues do not carry their input). */
function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let v: any = data;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = v[k as any];
  }
  return v;
}

/** zod's messages, rephrased as DRF's where a client may match on them. */
function message(issue: Issue, data: unknown): string {
  if (issue.code === "invalid_type" && /received undefined/.test(issue.message))
    return "This field is required.";
  if (issue.code === "invalid_type" && /received null/.test(issue.message))
    return "This field may not be null.";
  if (issue.code === "invalid_value" && "values" in issue) {
    const input = valueAt(data, issue.path);
    const shown = typeof input === "string" ? input : JSON.stringify(input);
    return `"${shown}" is not a valid choice. Choices: ${(issue.values as unknown[]).join(", ")}.`;
  }
  return issue.message;
}

/** Turns zod issues into the contract's error body: `{field: [..], nested: {sub: [..]}}`. */
export const MAX_REPORTED_ISSUES = 100;

export function zodToFieldErrors(issues: readonly Issue[], target?: string, data?: unknown): FieldErrors {
  const out: FieldErrors = {};
  // A list of thousands of wrong items would answer thousands of messages: the first ones tell
  // the client what is wrong; the rest are counted.
  if (issues.length > MAX_REPORTED_ISSUES) {
    out.non_field_errors = [`${issues.length} errors; the first ${MAX_REPORTED_ISSUES} are shown.`];
  }
  for (const issue of issues.slice(0, MAX_REPORTED_ISSUES)) {
    if (issue.code === "unrecognized_keys") {
      // Only query strings are strict (contract §3: unknown query parameters are 400).
      for (const key of issue.keys)
        out[key] = [target === "query" ? "Unknown query parameter." : "Unknown field."];
      continue;
    }
    const path = issue.path.filter((p) => typeof p === "string" || typeof p === "number").map(String);
    let node: FieldErrors = out;
    for (let i = 0; i < path.length - 1; i++) {
      const k = path[i];
      const existing = node[k];
      if (!existing || Array.isArray(existing)) node[k] = {};
      node = node[k] as FieldErrors;
    }
    const leaf = path.length ? path[path.length - 1] : "non_field_errors";
    const list = Array.isArray(node[leaf]) ? (node[leaf] as string[]) : [];
    list.push(message(issue, data));
    node[leaf] = list;
  }
  return out;
}

/**
 * Bodies that take one object or an array of them (`Item | Item[]`) fail as a zod union;
 * for an array the contract wants an array of error maps aligned with the input (`{}` for
 * valid items), so the array branch's issues are grouped by item index.
 */
export function drfErrors(
  issues: readonly Issue[],
  data: unknown,
  target?: string,
): FieldErrors | FieldErrors[] {
  if (issues.length === 1 && issues[0].code === "invalid_union" && data && typeof data === "object") {
    const branches = (issues[0] as unknown as { errors: Issue[][] }).errors;
    // A single object: its own branch's issues, as DRF names them field by field (the array
    // branch only says "expected array" at the root).
    if (!Array.isArray(data)) {
      const objectBranch = branches.find(
        (b) => !b.some((i) => i.path.length === 0 && i.code === "invalid_type" && i.expected === "array"),
      );
      if (objectBranch) return zodToFieldErrors(objectBranch, target, data);
      return zodToFieldErrors(issues, target, data);
    }
    // The object branch fails at the root with "expected object"; the other one is the array's.
    const arrayBranch = branches.find(
      (b) => !b.some((i) => i.path.length === 0 && i.code === "invalid_type"),
    );
    if (arrayBranch && !arrayBranch.every((i) => typeof i.path[0] === "number")) {
      return zodToFieldErrors(arrayBranch, target, data);
    }
    if (arrayBranch) {
      const out: FieldErrors[] = data.map(() => ({}));
      for (const issue of arrayBranch) {
        const idx = issue.path[0] as number;
        const errs = zodToFieldErrors([{ ...issue, path: issue.path.slice(1) } as Issue], target, data[idx]);
        out[idx] = mergeErrors(out[idx], errs);
      }
      return out;
    }
  }
  return zodToFieldErrors(issues, target, data);
}

function mergeErrors(a: FieldErrors, b: FieldErrors): FieldErrors {
  const out: FieldErrors = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    if (Array.isArray(prev) && Array.isArray(v)) out[k] = [...(prev as string[]), ...(v as string[])];
    else if (prev && !Array.isArray(prev) && !Array.isArray(v))
      out[k] = mergeErrors(prev as FieldErrors, v as FieldErrors);
    else out[k] = v;
  }
  return out;
}

export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result, _c) => {
      if (!result.success) {
        throw new ValidationError(
          drfErrors(result.error.issues, (result as { data?: unknown }).data, result.target),
        );
      }
    },
  });
}

export type Router = ReturnType<typeof createRouter>;
export type Ctx = Context<AppEnv, any, any>;

/** Registers a documented route; the handler reads validated input with `c.req.valid()`. */
/**
 * Registers a documented route; the handler reads validated, typed input with
 * `c.req.valid()`. Response bodies are not type-checked against the schemas (serializers own them).
 */
export function defineRoute<R extends RouteConfig>(
  app: Router,
  config: R,
  handler: (c: Parameters<RouteHandler<R, AppEnv>>[0]) => Promise<Response> | Response,
  opts: {
    /**
     * The handler starts with its first D1 batch (http/first-batch.ts), which the token's check
     * joins instead of costing a round trip of its own before the route: `"reads"` when it
     * starts with `firstBatch`, `"writes"` when its first write carries a `writeProof`.
     */
    firstBatch?: FirstBatchMode;
  } = {},
) {
  if (opts.firstBatch) markFirstBatch(handler, opts.firstBatch);
  // A route that declares its query parameters refuses unknown ones (contract §3); its validator
  // never sees an empty name (Hono drops `?=x`), so that one is refused before it.
  const middleware = config.request?.query
    ? [refuseEmptyQueryName, ...[config.middleware ?? []].flat()]
    : config.middleware;
  app.openapi({ ...config, middleware } as R, handler as any);
}

/**
 * `?=x` (or `?=`): a parameter whose name is empty (WHATWG URL's application/x-www-form-urlencoded
 * parsing keeps it), unknown like any name the route does not declare.
 */
const refuseEmptyQueryName: MiddlewareHandler = async (c, next) => {
  const query = c.req.url.indexOf("?");
  if (query >= 0 && new URLSearchParams(c.req.url.slice(query + 1)).has("")) {
    throw new ValidationError({ "": ["Unknown query parameter."] });
  }
  await next();
};

export const jsonBody = <T extends z.ZodTypeAny>(schema: T, description?: string) => ({
  body: { content: { "application/json": { schema } }, required: true, description },
});

export const jsonResponse = <T extends z.ZodTypeAny>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  description,
});

/**
 * A timestamp: RFC 3339 (OpenAPI 3.1 `format: date-time`), rendered with milliseconds, in UTC
 * or in the caller's `Accept-Timezone`. Documentation only: what a field accepts on input
 * (ISO 8601, a local time with `Accept-Timezone`) is checked by the services.
 */
export const dateTime = () =>
  z.string().openapi({ format: "date-time", example: "2026-01-02T03:04:05.000Z" });

/**
 * A timestamp a request gives (a body member, a list filter): `format: date-time` and the
 * service's syntax with the years it takes as a `pattern` (http/timezones.ts `timestampPattern`:
 * generators honour a pattern, and JSON Schema 2020-12 makes `format` an annotation only). zod
 * takes any string; `parseTimestamp` checks it with the service's own message, in the caller's
 * zone. `blank`: `""` too, for a field that takes it as null.
 */
export const dateTimeInput = (opts: { blank?: boolean } = {}) =>
  z.string().openapi({
    format: "date-time",
    pattern: timestampPattern(opts),
    example: "2026-01-02T03:04:05.000Z",
  });

/**
 * An e-mail address a request gives: zod's `email()` check (its "practical" rule: dot-separated
 * local part, a domain of labels and a top-level label of letters, so `0@com` is refused), which
 * `format: email` (RFC 5321's mailbox, far looser) does not state, written out as the `pattern`
 * from the same regex zod checks with (issue 56).
 */
export const emailAddress = () => z.string().email().openapi({ pattern: z.regexes.email.source });

/** A calendar day a request gives, `YYYY-MM-DD` (`format: date`, the API's days as a `pattern`). */
export const dayInput = () =>
  z.string().openapi({ format: "date", pattern: DAY_PATTERN, example: "2026-01-02" });

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * JSON Schema for a comma-separated list of choices (`?state=assigned,completed`), so that the
 * document states what the service's list filters take (issue 46): a `pattern` over the choices.
 */
export const commaList = (choices: readonly string[]) => {
  const one = `(${choices.map(escapeRegExp).join("|")})`;
  return { pattern: `^${one}(,${one})*$` };
};

/** `#/components/schemas/<name>`, for JSON Schema written out in `.openapi()` metadata. */
export const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * JSON Schema 2020-12 keywords for `.openapi()` metadata that zod-to-openapi's types do not
 * name (`if`/`then`/`else`) or that hold raw JSON Schema: a rule across fields, which the service
 * checks itself with its own messages, stated in the document (issue 46). The check and the
 * statement are kept side by side, and test/openapi/properties.test.ts holds them to each other.
 */
export const jsonSchemaRules = (rules: Record<string, unknown>) => rules as never;

/**
 * A JSON Schema 2020-12 conditional (§10.2.2): where `condition` holds, `then` applies, elsewhere
 * `otherwise`. Built from entries: an object literal with a `then` member reads as a thenable.
 */
export const when = (condition: object, then?: object, otherwise?: object) =>
  Object.fromEntries([
    ["if", condition],
    ...(then ? [["then", then]] : []),
    ...(otherwise ? [["else", otherwise]] : []),
  ]);

/** A text that is not blank: what the services' "This field may not be blank." checks. */
export const NOT_BLANK = "\\S";

/**
 * A template's text whose every `{{name}}` placeholder names one of `names` (domain/tracker.ts
 * `badPlaceholders`: `{{`, optional spaces, the name, optional spaces, `}}`, no brace between).
 * ECMA-262 lookaheads, as JSON Schema 2020-12's `pattern` takes them.
 */
export const placeholderPattern = (names: readonly string[], opts: { notBlank?: boolean } = {}) =>
  `^${opts.notBlank ? "(?=[\\s\\S]*\\S)" : ""}(?![\\s\\S]*\\{\\{(?!\\s*(?:${names.map(escapeRegExp).join("|")})\\s*\\}\\})[^{}]*\\}\\})`;

/** A query parameter's boolean: what the list filters take (`true`/`false`, `1`/`0`, `yes`/`no`). */
export const BOOLEAN_TEXT = ["true", "false", "1", "0", "yes", "no"] as const;

export const ErrorSchema = z
  .object({
    detail: z.string().openapi({ description: "Human-readable; do not match on it." }),
    code: z.enum(ERROR_CODES).openapi({ description: "Stable, machine-readable code." }),
  })
  .openapi("Error", {
    description: "HTTP error (contract §3). `server_error` answers also carry `request_id`.",
    example: { detail: "Not found.", code: "not_found" },
  });
export const ValidationErrorSchema = z.record(z.string(), z.any()).openapi("ValidationError", {
  description: 'DRF-shaped field errors: `{"field": ["message"], "non_field_errors": [...]}`.',
});

/**
 * One object or an array of them, for the batch endpoints (`POST /orders/`, `POST /task_commands/`):
 * JSON Schema 2020-12 `oneOf`, whose branches never overlap (an object is not an array), so a
 * generated client types it `T | T[]` and no cast is needed.
 */
export const oneOrMany = <T extends z.ZodTypeAny>(schema: T, description: string, maxItems?: number) =>
  z
    .union([schema, maxItems === undefined ? z.array(schema) : z.array(schema).max(maxItems)])
    .openapi({ description }, { unionPreferredType: "oneOf" });

/** The 400 of a batch endpoint: a field map for one object, an array of them (`{}` for valid items) for an array. */
export const batchValidationError = jsonResponse(
  oneOrMany(
    ValidationErrorSchema,
    "One object sent: its field map. An array sent: one field map per item, in input order, `{}` for the valid ones (contract §3); nothing is stored.",
  ),
  "Validation error.",
);

export const errorResponses = {
  400: jsonResponse(ValidationErrorSchema, "Validation error."),
  401: jsonResponse(ErrorSchema, "Not authenticated or invalid token."),
  403: jsonResponse(ErrorSchema, "Permission denied."),
  404: jsonResponse(ErrorSchema, "Not found."),
  429: jsonResponse(ErrorSchema, "Throttled; see Retry-After."),
} as const;

export const security: Record<string, string[]>[] = [{ Bearer: [] }, { Token: [] }];

export const uuidParam = z.object({
  id: z
    .string()
    .openapi({ param: { name: "id", in: "path" }, description: "UUID of the object (not a UUID: 404)." }),
});

/**
 * The JSON body a route answers with `status`, typed from its exported config: tests and typed
 * clients read `ResponseOf<typeof retrieveTaskRoute>` instead of restating the shape.
 */
export type ResponseOf<
  R extends RouteConfig,
  S extends keyof R["responses"] = 200,
> = R["responses"][S] extends {
  content: { "application/json": { schema: infer T } };
}
  ? T extends z.ZodTypeAny
    ? z.infer<T>
    : never
  : never;
