import { createRoute, z } from "@hono/zod-openapi";
import { notFound } from "../../http/errors";
import { currentPrincipal, settleWith, writeProof } from "../../http/first-batch";
import { pathId, requireUser } from "../../http/guards";
import {
  batchValidationError,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonResponse,
  oneOrMany,
  type Router,
  security,
  uuidParam,
} from "../../http/openapi";
import { mapPage, pageSchema, paginationQuery } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import {
  applySingle,
  finishSingle,
  getCommand,
  isSingle,
  listCommands,
  submitCommands,
  submitCommandsAsync,
} from "../../services/task-commands";
import type { CommandRow } from "../../services/task-commands/types";
import { serializeCommand, TaskCommandBodySchema, TaskCommandListQuery, TaskCommandSchema } from "./schema";

const tags = ["Task commands"];

const wantsAsync = (prefer: string | undefined) =>
  !!prefer && prefer.split(",").some((p) => p.trim().toLowerCase() === "respond-async");

export const createTaskCommandRoute = createRoute({
  method: "post",
  path: "/task_commands/",
  tags,
  security,
  summary: "Send one command or a batch",
  description:
    "Applied in the order given per task (tasks in parallel), each through the task's Durable Object. " +
    "`external_id` is the idempotency key: a replay returns the stored command and applies nothing (single replay: 200). " +
    "Batch: 201, or 200 when every item was a replay. With `Prefer: respond-async`: 202 and every command `pending`, " +
    "applied from a queue. Invalid moves and missing rights are `rejected` commands, not HTTP errors.",
  request: {
    headers: z.object({
      prefer: z.string().optional().openapi({ description: "`respond-async` for asynchronous mode." }),
    }),
    ...jsonBody(TaskCommandBodySchema),
  },
  responses: {
    200: jsonResponse(
      oneOrMany(TaskCommandSchema, "The stored commands: an array when an array was sent."),
      "Every command was a replay of a stored one (its `external_id` exists): nothing applied again.",
    ),
    201: jsonResponse(
      oneOrMany(
        TaskCommandSchema,
        "The commands with their outcome, in input order: an array when an array was sent.",
      ),
      "Applied: each command `accepted` or `rejected`.",
    ),
    202: {
      ...jsonResponse(
        oneOrMany(
          TaskCommandSchema,
          "The commands, `pending`, in input order: an array when an array was sent.",
        ),
        "`Prefer: respond-async`: stored `pending`, applied from a queue.",
      ),
      headers: {
        "Preference-Applied": {
          description: "RFC 7240: the preference honoured.",
          required: true,
          schema: { type: "string", enum: ["respond-async"] },
        },
      },
    },
    ...errorResponses,
    400: batchValidationError,
  },
});

export const listTaskCommandsRoute = createRoute({
  method: "get",
  path: "/task_commands/",
  tags,
  security,
  summary: "List commands (workers: their own)",
  request: { query: TaskCommandListQuery.extend(paginationQuery).strict() },
  responses: {
    200: jsonResponse(pageSchema(TaskCommandSchema), "A page of commands."),
    ...errorResponses,
  },
});

export const retrieveTaskCommandRoute = createRoute({
  method: "get",
  path: "/task_commands/{id}/",
  tags,
  security,
  summary: "Read a command (its outcome in asynchronous mode)",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(TaskCommandSchema, "The command."), ...errorResponses },
});

export function mountTaskCommands(app: Router) {
  defineRoute(
    app,
    createTaskCommandRoute,
    async (c) => {
      const body = c.req.valid("json");
      const isArray = Array.isArray(body);
      const items = isArray ? body : [body];
      const opts = { timeZone: c.get("timeZone"), isArray, baseUrl: c.get("baseUrl") };
      const r = renderCtx(c);
      const answer = (rows: CommandRow[], status: 200 | 201 | 202) => {
        const out = rows.map((row) => serializeCommand(r, row));
        return c.json(isArray ? out : out[0], status);
      };
      if (wantsAsync(c.req.header("Prefer"))) {
        const rows = await submitCommandsAsync(c.env, await currentPrincipal(c), items, opts);
        c.header("Preference-Applied", "respond-async");
        return answer(rows, 202);
      }
      // A single command: the token's check rides on the batch its task's object makes (one D1
      // round trip after the object) when this isolate has settled the token before.
      const known = isSingle(items) ? writeProof(c) : null;
      if (known) {
        const one = await applySingle(c.env, known.principal, items[0], opts, known.proof);
        // A 401 here for a token that no longer holds (then nothing was written).
        const p = await settleWith(c, one.token);
        // Unless the token proves another principal than before (a changed role or setting;
        // then nothing was written): the command is submitted again for the one it proves now.
        if (!one.tokenMismatch && JSON.stringify(p) === JSON.stringify(known.principal)) {
          const { rows, allReplays } = await finishSingle(c.env, one, opts);
          return answer(rows, allReplays ? 200 : 201);
        }
      }
      const { rows, allReplays } = await submitCommands(c.env, await currentPrincipal(c), items, opts);
      return answer(rows, allReplays ? 200 : 201);
    },
    { firstBatch: "writes" },
  );

  defineRoute(app, listTaskCommandsRoute, async (c) => {
    const p = requireUser(c);
    const page = await listCommands(c.env, p, c.req.valid("query"), {
      url: c.req.url,
      timeZone: c.get("timeZone"),
    });
    const r = renderCtx(c);
    return c.json(mapPage(page, (row) => serializeCommand(r, row)));
  });

  defineRoute(app, retrieveTaskCommandRoute, async (c) => {
    const p = requireUser(c);
    const row = await getCommand(c.env, p, pathId(c));
    if (!row) throw notFound();
    return c.json(serializeCommand(renderCtx(c), row));
  });
}
