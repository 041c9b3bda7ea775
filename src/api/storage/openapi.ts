/**
 * The storage surface in the OpenAPI document (the handlers are in ./index.ts). Written by hand:
 * the upload is a streamed multipart body, and a stored file is whatever was stored, so neither
 * is a zod-validated JSON route.
 */
import { z } from "@hono/zod-openapi";
import type { Router } from "../../http/openapi";
import { FILES_PREFIX, STORAGE_PREFIX } from "../../http/urls";
import { FILE_PATH_TEMPLATES } from "../../s3/keys";
import { UploadFormFieldsSchema } from "../file-uploads/schema";

const tags = ["Storage"];

const xml = (
  description: string,
  headers?: Record<string, ReturnType<typeof header>>,
  body = "S3's `<Error><Code>...</Code><Message>...</Message></Error>`.",
) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { "application/xml": { schema: z.string().openapi({ description: body }) } },
});

const header = (description: string, required = false) => ({
  description,
  required,
  schema: { type: "string" as const },
});

/** What every stored file is sent with (src/s3/serve.ts). */
const FILE_HEADERS = {
  ETag: header(
    "The object's entity tag (RFC 9110 §8.8.3), for `If-None-Match` / `If-Match` / `If-Range`.",
    true,
  ),
  "Last-Modified": header("When the object was stored (an HTTP-date).", true),
  "Accept-Ranges": header("`bytes`: one byte range may be asked for (RFC 9110 §14.3).", true),
  "Content-Length": header("Bytes in this answer.", true),
  "X-Content-Type-Options": header("`nosniff`: the stored type is final.", true),
  "Content-Security-Policy": header(
    "`sandbox`: an uploaded HTML or SVG file runs in an opaque origin (CSP3), never as this API's origin.",
    true,
  ),
  "Content-Disposition": header(
    "When the object was stored with one: `s3_response_headers` of documents and signatures; `attachment` for exports.",
  ),
  "Cache-Control": header(
    "`private, no-store` (RFC 9111: no browser or proxy keeps a copy), unless the object was stored with one (`s3_response_headers`).",
    true,
  ),
  "Content-Language": header("When stored with one (`s3_response_headers`)."),
  "Content-Encoding": header("When stored with one; the bytes are sent as stored."),
  Expires: header("When stored with one (`s3_response_headers`)."),
};

const FILE_DESCRIPTION =
  "Anonymous, like an S3 public-read object: the unguessable id in the path is the capability (exports: the " +
  "signed link above). Take the URL from the object that hands it out rather than building it; each segment is " +
  "percent-encoded (RFC 3986), so a file name with spaces or other reserved characters travels intact.\n\n" +
  "Served with the **stored type**, whatever it is: a document's or signature's detected `mimetype` (or the " +
  "`Content-Type` of its `s3_response_headers`), a file upload's `file_type`, a thumbnail's `image/png` or " +
  "`image/jpeg`, an export's `text/csv; charset=utf-8` or `application/jsonl; charset=utf-8`, an e-mail " +
  "attachment's type; `application/octet-stream` when none was stored. Hence `*/*` below.\n\n" +
  "Byte ranges (RFC 9110 §14): one range in `Range` → 206 with `Content-Range`; a range that starts past the end → " +
  "416 with `Content-Range: bytes */<size>`; several ranges, or a unit other than `bytes` → the whole file (200). " +
  "`If-Range` (an ETag or the Last-Modified date) makes the range conditional. Conditional requests (RFC 9110 " +
  "§13): `If-None-Match` / `If-Modified-Since` → 304 when unchanged; `If-Match` / `If-Unmodified-Since` → 412 " +
  "when changed. `HEAD` answers the same headers without the body. Not rate limited; CORS open to any origin " +
  "(exports: none). " +
  "Errors are S3's XML.";

const requestHeaders = z.object({
  range: z
    .string()
    .optional()
    .openapi({ description: "`bytes=<first>-<last>`, `bytes=<first>-` or `bytes=-<suffix length>`." }),
  "if-range": z
    .string()
    .optional()
    .openapi({ description: "Serve the range only if the ETag or date still holds." }),
  "if-match": z
    .string()
    .optional()
    .openapi({ description: "412 unless one of these ETags (strong comparison) matches." }),
  "if-none-match": z
    .string()
    .optional()
    .openapi({ description: "304 when one of these ETags (weak comparison) matches." }),
  "if-modified-since": z
    .string()
    .optional()
    .openapi({ description: "304 when not modified since this HTTP-date." }),
  "if-unmodified-since": z
    .string()
    .optional()
    .openapi({ description: "412 when modified since this HTTP-date." }),
});

const pathParam = (name: string, description: string) =>
  z.string().openapi({ param: { name, in: "path" }, description });

const PARAMS: Record<string, z.ZodString> = {
  id: pathParam("id", "The id of the object the file belongs to (as in its `file` URL)."),
  file_name: pathParam("file_name", "The file name, percent-encoded (as in its `file` URL)."),
  thumbnail_name: pathParam("thumbnail_name", "`200.png` or `200.jpg` (as in its `thumbnail` URL)."),
  token: pathParam("token", "The export file's random capability (as in its `file` URL)."),
};

/** One documented path per key shape the service hands out (src/s3/keys.ts `FILE_PATH_TEMPLATES`). */
const FILE_OPERATIONS: Record<keyof typeof FILE_PATH_TEMPLATES, { operationId: string; summary: string }> = {
  fileupload: {
    operationId: "downloadFileUpload",
    summary: "Download an uploaded file (a file upload's `file`, until a document or signature takes it)",
  },
  documents: { operationId: "downloadDocument", summary: "Download a document's file (its `file`)" },
  documentThumbnails: {
    operationId: "downloadDocumentThumbnail",
    summary: "Download a document's thumbnail (its `thumbnail`)",
  },
  signatures: { operationId: "downloadSignature", summary: "Download a signature's file (its `file`)" },
  signatureThumbnails: {
    operationId: "downloadSignatureThumbnail",
    summary: "Download a signature's thumbnail (its `thumbnail`)",
  },
  exports: {
    operationId: "downloadExport",
    summary: "Download an export's file (its `file`, once `completed`)",
  },
  outbox: {
    operationId: "downloadOutboxAttachment",
    summary: "Download an e-mail attachment kept by the local e-mail provider (`GET /outbox/`)",
  },
};

const fileBody = {
  "*/*": {
    schema: z.string().openapi({
      format: "binary",
      description: "The stored bytes, with the stored `Content-Type` (see the description).",
    }),
  },
};

/** Export files (and the archive) are private: a short-lived signed link (src/s3/signed-links.ts). */
const SIGNED_LINK_DESCRIPTION =
  "**Private:** only through the signed link the export hands out in `file` (its `expires` and `signature` " +
  "query parameters), valid `SIGNED_LINK_SECONDS` (900 s) and never past the file's `file_expires_at`; read the " +
  "export again for a fresh link. Without CORS and with `Cache-Control: private, no-store`. A missing, forged " +
  "or expired link is 403 `AccessDenied` (`Request has expired` for an expired one).\n\n";
const signedLinkQuery = z.object({
  expires: z.string().openapi({ description: "When the link stops working (Unix seconds)." }),
  signature: z
    .string()
    .openapi({ description: "HMAC-SHA256 of the key and `expires` (64 hex digits), as handed out." }),
});

function documentFiles(app: Router) {
  for (const [shape, template] of Object.entries(FILE_PATH_TEMPLATES)) {
    const names = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const signed = shape === "exports";
    app.openAPIRegistry.registerPath({
      method: "get",
      path: `${FILES_PREFIX}/${template}`,
      tags,
      security: [],
      ...FILE_OPERATIONS[shape as keyof typeof FILE_PATH_TEMPLATES],
      description: signed ? SIGNED_LINK_DESCRIPTION + FILE_DESCRIPTION : FILE_DESCRIPTION,
      request: {
        params: z.object(Object.fromEntries(names.map((n) => [n, PARAMS[n]]))),
        ...(signed ? { query: signedLinkQuery } : {}),
        headers: requestHeaders,
      },
      responses: {
        ...(signed ? { 403: xml("`AccessDenied`: the signed link is missing, forged or expired.") } : {}),
        200: { description: "The whole file.", headers: FILE_HEADERS, content: fileBody },
        206: {
          description: "The one byte range asked for.",
          headers: {
            ...FILE_HEADERS,
            "Content-Range": header("`bytes <first>-<last>/<size>` (RFC 9110 §14.4).", true),
          },
          content: fileBody,
        },
        304: {
          description: "Not modified (`If-None-Match` / `If-Modified-Since`); no body.",
          headers: { ETag: FILE_HEADERS.ETag, "Last-Modified": FILE_HEADERS["Last-Modified"] },
        },
        404: xml("`NoSuchKey`: no such file (never stored, or deleted with its object)."),
        405: xml("`MethodNotAllowed`: only GET and HEAD.", {
          Allow: header("`GET, HEAD`.", true),
        }),
        412: xml("`PreconditionFailed`: `If-Match` / `If-Unmodified-Since` did not hold."),
        416: xml("`InvalidRange`: the range starts past the end of the file.", {
          "Content-Range": header("`bytes */<size>`.", true),
        }),
        503: xml("`SlowDown`: the file was replaced twice while it was being read; retry."),
      },
    });
  }
}

export function documentStorage(app: Router) {
  app.openAPIRegistry.registerPath({
    method: "post",
    path: `${STORAGE_PREFIX}/`,
    tags,
    security: [],
    operationId: "uploadFile",
    summary: "Upload a file with a signed form ({upload_url})",
    description:
      "S3's POST Object (AWS Signature Version 4 POST policy), served by this Worker in front of R2. " +
      "Post `s3_signature.fields` of a file upload as they are, then the file as the LAST part named `file`. " +
      "Anonymous: the policy's signature is the authorization. Field names are case-insensitive; every field but " +
      "`policy`, `x-amz-signature`, `file` and `x-ignore-*` must be covered by a policy condition; parts after the " +
      "file are ignored; form fields before the file are limited to 64 KiB. The file is streamed into R2 and " +
      "`content-length-range` is enforced while it streams. Errors are S3's XML (`<Error><Code>`): 403 " +
      "`SignatureDoesNotMatch`, `AccessDenied` (expired policy, failed condition, extra field, a form already " +
      "used by a document or signature), `InvalidAccessKeyId`; 400 `EntityTooLarge`, `EntityTooSmall`, " +
      "`InvalidArgument` (missing field or no file), `InvalidPolicyDocument`, `MalformedPOSTRequest`, " +
      "`MaxPostPreDataLengthExceeded`; 412 when the body is not multipart/form-data.",
    request: {
      body: {
        required: true,
        content: {
          "multipart/form-data": {
            schema: UploadFormFieldsSchema.extend({
              success_action_status: z.enum(["200", "201", "204"]).optional(),
              success_action_redirect: z.string().optional(),
              // Any bytes (OpenAPI 3.1 §4.8.14.3: a binary part is a schema without a type), and
              // required (`InvalidArgument` without it): a refinement that refuses undefined is
              // what zod-to-openapi reads as required (`z.any()` alone is optional; issue 56).
              file: z
                .any()
                .refine((v) => v !== undefined)
                .openapi({
                  description:
                    "The file (`application/octet-stream` or its own type): the last part, exactly one.",
                }),
            }),
          },
        },
      },
    },
    responses: {
      204: { description: "Stored (default). `ETag` and `Location` (the file's URL) headers." },
      200: { description: "Stored, with `success_action_status=200`." },
      201: xml(
        "Stored, with `success_action_status=201`.",
        undefined,
        "S3's `<PostResponse>` with Location, Bucket, Key, ETag.",
      ),
      303: { description: "Stored, with `success_action_redirect`: redirect with bucket, key and etag." },
      400: xml("S3 error (see above)."),
      403: xml("S3 error (see above)."),
      412: xml("Not multipart/form-data."),
    },
  });
  documentFiles(app);
}
