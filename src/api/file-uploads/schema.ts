import { z } from "@hono/zod-openapi";
import { dateTime } from "../../http/openapi";
import { paginationQuery } from "../../http/pagination";
import { FILE_NAME_PATTERN, MAX_FILE_NAME_LENGTH } from "../../s3/keys";
import { MEDIA_TYPE_RE } from "../../services/files/uploads";

export const FileUploadBodySchema = z
  .object({
    file_name: z.string().openapi({
      description:
        "Name of the file; kept as is in the storage key `fileupload/<id>/<file_name>`. At most 255 characters, " +
        'no "/", "\\" or control characters, not "." or "..".',
      example: "proof of delivery.jpg",
      // Checked by the service (s3/keys.ts `fileNameProblem`); the same rules as JSON Schema.
      minLength: 1,
      maxLength: MAX_FILE_NAME_LENGTH,
      pattern: FILE_NAME_PATTERN,
    }),
    file_type: z.string().openapi({
      description:
        "Media type of the file; the form's `Content-Type` field repeats it and the policy pins it.",
      example: "image/jpeg",
      // RFC 9110 §8.3.1 `media-type` (services/files/uploads.ts).
      maxLength: 255,
      pattern: MEDIA_TYPE_RE.source,
    }),
    source: z
      .string()
      .max(64)
      .optional()
      .openapi({ description: "Origin of the upload; `integration` (the default) for API callers." }),
  })
  .openapi("FileUploadCreate");

/**
 * The form fields of a signed upload, exactly those the service signs (src/s3/post-policy): a
 * typed client posts them as they are, then the file, to `{upload_url}`.
 */
export const UploadFormFieldsSchema = z
  .object({
    acl: z.string().openapi({ description: "`public-read`." }),
    "Content-Type": z.string().openapi({ description: "The upload's `file_type`, pinned by the policy." }),
    key: z.string().openapi({ description: "`fileupload/<id>/<file_name>`." }),
    "x-amz-algorithm": z.string().openapi({ description: "`AWS4-HMAC-SHA256`." }),
    "x-amz-credential": z
      .string()
      .openapi({ description: "`<access key id>/<yyyymmdd>/<region>/s3/aws4_request`." }),
    "x-amz-date": z.string().openapi({ description: "`yyyymmddThhmmssZ`." }),
    policy: z.string().openapi({ description: "The base64 policy document." }),
    "x-amz-signature": z.string().openapi({ description: "Hex HMAC-SHA256 of `policy` (SigV4)." }),
  })
  .openapi("UploadFormFields", {
    description:
      "Form parts to post as they are, before the `file` part (AWS Signature Version 4 POST policy).",
  });

export const FileUploadSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    file: z.string().url().openapi({
      description: "Where the stored file is served (`{base_url}/files/<key>`, the name percent-encoded).",
    }),
    file_name: z.string(),
    file_type: z.string(),
    s3_signature: z
      .object({
        url: z
          .string()
          .url()
          .openapi({ description: "`{upload_url}`: `{base_url}/storage/`, served by this Worker." }),
        fields: UploadFormFieldsSchema,
      })
      .openapi({
        description:
          "An AWS Signature Version 4 POST policy valid for 1 hour after `created_at`, bounding bucket, key, acl, " +
          "Content-Type, the SigV4 fields and `content-length-range` (0 to `UPLOAD_MAX_BYTES`, default 100 MiB).",
      }),
    created_by: z.string().url().nullable(),
    source: z.string(),
    uploaded_at: dateTime()
      .nullable()
      .openapi({ description: "When the storage endpoint stored the file; null until then." }),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("FileUpload");

export const FileUploadListQuery = z.object({ ...paginationQuery }).strict();
