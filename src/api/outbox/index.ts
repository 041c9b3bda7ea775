import { createRoute, z } from "@hono/zod-openapi";
import { requireRole } from "../../http/guards";
import {
  dateTime,
  defineRoute,
  errorResponses,
  jsonResponse,
  type Router,
  security,
} from "../../http/openapi";
import { mapPage, pageSchema, paginationQuery } from "../../http/pagination";
import { renderCtx, ts } from "../../http/serialize";
import { fileUrl } from "../../s3/keys";
import { listOutbox } from "../../services/messaging/email/outbox";

const OutboundEmailSchema = z
  .object({
    id: z.string().uuid(),
    kind: z.string().openapi({ description: "`activation`, `invitation`, ..." }),
    to: z.string(),
    subject: z.string(),
    text: z.string(),
    attachments: z
      .array(
        z.object({
          file_name: z.string(),
          content_type: z.string(),
          size: z.number().int(),
          file: z.string().url().openapi({ description: "The attachment, as a stored file." }),
        }),
      )
      .openapi({
        description: "Files sent with the message (the POD PDF of a `task_completed` notification).",
      }),
    created_at: dateTime(),
  })
  .openapi("OutboundEmail");

export const listOutboxRoute = createRoute({
  method: "get",
  path: "/outbox/",
  operationId: "listOutbox",
  tags: ["Outbox"],
  security,
  summary: "E-mail kept by the local provider for the caller's account (admins, local mode only)",
  description: "Exists only when `EMAIL_PROVIDER` is `local` (development and tests); 404 otherwise.",
  request: { query: z.object({ ...paginationQuery }).strict() },
  responses: {
    200: jsonResponse(pageSchema(OutboundEmailSchema), "A page of messages."),
    ...errorResponses,
  },
});

export function mountOutbox(app: Router) {
  defineRoute(app, listOutboxRoute, async (c) => {
    const p = requireRole(c, "admin");
    const page = await listOutbox(c.env, p, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    return c.json(
      mapPage(page, (m) => ({
        id: m.id,
        kind: m.kind,
        to: m.to_address,
        subject: m.subject,
        text: m.text,
        attachments: (
          JSON.parse(m.attachments || "[]") as {
            file_name: string;
            content_type: string;
            size: number;
            key: string;
          }[]
        ).map((a) => ({
          file_name: a.file_name,
          content_type: a.content_type,
          size: a.size,
          file: fileUrl(r.baseUrl, a.key),
        })),
        created_at: ts(r, m.created_at),
      })),
    );
  });
}
