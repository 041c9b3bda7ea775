import { z } from "@hono/zod-openapi";
import { dateTime } from "../../http/openapi";
import { paginationQuery } from "../../http/pagination";
import { hyperlinkListSchema, hyperlinkSchema } from "../../http/urls";
import { RESPONSE_HEADER_NAMES } from "../../services/files/response-headers";
import { type AttachmentKind, COLLECTION_OF } from "../../services/files/types";

const signerName = z.string().max(200).nullable().optional().openapi({
  description:
    "Who signed. Required when the account sets `feature_signer_name`; then, when the task lists `signers`, one of their names.",
});

const title = (kind: AttachmentKind) => (kind === "document" ? "Document" : "Signature");

export function attachmentSchemas(kind: AttachmentKind) {
  const Title = title(kind);
  const create = z
    .object({
      account: hyperlinkSchema("accounts", "The caller's account (URL)."),
      task: hyperlinkSchema("tasks", "Task URL (a worker: one of its tasks)."),
      file_upload: hyperlinkSchema(
        "file_uploads",
        "File upload URL, of this account, already uploaded, not yet attached to another document or signature.",
      ),
      order: hyperlinkSchema("orders", "Order URL; by default the task's order.").nullable().optional(),
      description: z.string().max(10_000).optional().openapi({ description: 'Default "".' }),
      visible_to_worker: z.boolean().optional().openapi({ description: "Default true." }),
      visible_to_client: z.boolean().optional().openapi({ description: "Default false." }),
      external_id: z.string().max(255).nullable().optional(),
      source: z
        .string()
        .max(64)
        .nullable()
        .optional()
        .openapi({ description: "Default: the file upload's source." }),
      s3_response_headers: z
        .record(z.string(), z.any())
        .optional()
        .openapi({
          description:
            `Write-only. Headers to serve the file with: ${RESPONSE_HEADER_NAMES.join(", ")} ` +
            "(names case-insensitive; S3's `response-` prefix accepted). Content-Type overrides the detected type for serving.",
          example: { "Content-Disposition": 'attachment; filename="pod.pdf"' },
        }),
      ...(kind === "signature" ? { signer_name: signerName } : {}),
    })
    .openapi(`${Title}Create`);

  const patch = z
    .object({
      description: z.string().max(10_000).optional(),
      visible_to_worker: z.boolean().optional(),
      visible_to_client: z.boolean().optional(),
    })
    .openapi(`${Title}Patch`, { description: "Other fields are read-only and ignored." });

  const item = z
    .object({
      id: z.string().uuid(),
      url: z.string().url(),
      account: z.string().url(),
      task: z.string().url().nullable(),
      order: z.string().url().nullable(),
      file_upload: z.string().url().nullable(),
      external_id: z.string().nullable(),
      file: z
        .string()
        .url()
        .openapi({ description: `\`{base_url}/files/${kind}s/<id>/<file_name>\`.` }),
      file_name: z
        .string()
        .openapi({ description: "The upload's file name, spaces replaced by underscores." }),
      description: z.string(),
      visible_to_worker: z.boolean(),
      visible_to_client: z.boolean(),
      source: z.string().nullable(),
      created_by: z.string().url().nullable(),
      mimetype: z.string().nullable().openapi({ description: "Detected from the file's first bytes." }),
      thumbnail: z
        .string()
        .url()
        .nullable()
        .openapi({
          description:
            "A 200 px (max side) PNG or JPEG of an image (PNG, JPEG, GIF, WebP, BMP up to 12.6 MP), made asynchronously " +
            "shortly after creation; null before that and for other files.",
        }),
      recurrence: z.string().url().nullable(),
      ...(kind === "signature" ? { signer_name: z.string().nullable() } : {}),
      created_at: dateTime(),
      updated_at: dateTime(),
    })
    .openapi(Title);

  const listQuery = z
    .object({
      task: hyperlinkSchema("tasks", "Task URL or id.").optional(),
      task__in: hyperlinkListSchema("tasks", "Tasks: those of any of them.").optional(),
      order: hyperlinkSchema("orders", "Order URL or id.").optional(),
      ...paginationQuery,
    })
    .strict();

  const batchDelete = z
    .object({
      ids: z
        .array(hyperlinkSchema(COLLECTION_OF[kind], `A ${kind}'s URL or id.`))
        .min(1, "This list may not be empty.")
        .max(500, "Too many ids: at most 500 per request.")
        .openapi({ description: `${Title} ids or URLs.` }),
    })
    .openapi(`${Title}BatchDelete`);

  return { create, patch, item, listQuery, batchDelete };
}
