import { createRoute, z } from "@hono/zod-openapi";
import { requireRole } from "../../http/guards";
import {
  dateTime,
  dayInput,
  defineRoute,
  errorResponses,
  jsonResponse,
  type Router,
  security,
} from "../../http/openapi";
import { pageSchema, paginationQuery } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import { listArchives, serializeArchive } from "../../services/retention/list";
import { RETAINED } from "../../services/retention/windows";

const tags = ["Archives"];
const KINDS = ["tasks", ...RETAINED.filter((k) => k.scope === "account").map((k) => k.kind)] as [
  string,
  ...string[],
];

export const ArchiveSchema = z
  .object({
    id: z.string().uuid(),
    kind: z.enum(KINDS).openapi({
      description:
        "What the rows are (`tasks` carry their commands, documents, signatures and form responses).",
    }),
    date: z.string().openapi({
      description: "The UTC day of the rows (`YYYY-MM-DD`): made on it, or for `tasks` finished on it.",
    }),
    part: z
      .number()
      .int()
      .openapi({ description: "1, or more when a day held more than `ARCHIVE_ROWS_PER_OBJECT` rows." }),
    rows: z.number().int(),
    bytes: z.number().int().openapi({ description: "Size of the object (gzip)." }),
    sha256: z.string().nullable().openapi({ description: "SHA-256 (hex) of the uncompressed JSON Lines." }),
    url: z.string().url().openapi({
      description:
        "A signed link to the object (gzip-compressed JSON Lines, one row per line, as stored), valid `SIGNED_LINK_SECONDS` (900); list again for a fresh one.",
    }),
    account: z.string().url(),
    created_at: dateTime(),
  })
  .openapi("Archive");

export const listArchivesRoute = createRoute({
  method: "get",
  path: "/archives/",
  tags,
  security,
  summary: "The account's archive: rows past their retention window (admins)",
  description:
    "The cron moves rows past their window (docs/configuration.md: events and webhook deliveries 30 days, SMS and e-mails 90, finished jobs 90, finished tasks after the account's `data_retention_days`) into R2, one gzip JSON Lines object per kind and day, verified before the rows are deleted. Newest first.",
  request: {
    query: z
      .object({
        ...paginationQuery,
        kind: z.enum(KINDS).optional(),
        date__gte: dayInput().optional().openapi({ description: "Days from this one (`YYYY-MM-DD`)." }),
        date__lte: dayInput().optional().openapi({ description: "Days up to this one (`YYYY-MM-DD`)." }),
      })
      .strict(),
  },
  responses: {
    200: jsonResponse(pageSchema(ArchiveSchema), "A page of archive objects."),
    ...errorResponses,
  },
});

export function mountArchives(app: Router) {
  defineRoute(app, listArchivesRoute, async (c) => {
    const p = requireRole(c, "admin");
    const page = await listArchives(c.env.DB, p, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    const results = await Promise.all(page.results.map((a) => serializeArchive(c.env, r, a)));
    return c.json({ ...page, results });
  });
}
