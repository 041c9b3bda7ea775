/**
 * The storage endpoint's work (`POST {upload_url}`, interface §4.2, contract §8): S3's POST
 * Object in front of R2. The form is parsed as a stream, verified exactly as S3 verifies it
 * (storage/post-policy.ts), and the file part streamed into R2 (storage/r2-put.ts) through
 * the policy's `content-length-range`, which is enforced while the bytes go by.
 *
 * Everything thrown is an S3Error, a MultipartError or a ByteLimitError; the route maps them
 * to S3's XML with `toS3Error`.
 */
import { byteLimiter, type FormField, parseMultipartForm } from "../../s3/multipart";
import { verifyPostForm } from "../../s3/post-policy";
import { putStream } from "../../s3/r2-put";
import { accessDenied, noFile } from "../../s3/s3-errors";
import { storageSettings } from "./settings";
import { isConsumedUpload, markUploaded, uploadHome } from "./uploads";

const CONSUMED = "This upload was already used by a document or signature; request a new upload form.";

export type PostObjectOutcome = {
  bucket: string;
  key: string;
  object: R2Object;
  /** 200, 201 or 204 (`success_action_status`, default 204). */
  status: 200 | 201 | 204;
  /** `success_action_redirect` (or the legacy `redirect`), when given. */
  redirect: string | null;
};

/**
 * The object's HTTP metadata from the form, as S3 takes it from POST Object fields:
 * Content-Type (default application/octet-stream), Cache-Control, Content-Disposition,
 * Content-Encoding, Expires, and `x-amz-meta-*` user metadata (names lowercased, as S3
 * stores them). Each of these had to be covered by a policy condition to get here.
 */
export function objectMetadata(fields: Map<string, FormField>): {
  httpMetadata: R2HTTPMetadata;
  customMetadata: Record<string, string>;
} {
  const get = (name: string) => fields.get(name)?.value || undefined;
  const expires = get("expires");
  const expiry = expires ? new Date(expires) : undefined;
  const customMetadata: Record<string, string> = {};
  for (const [lower, f] of fields) {
    if (lower.startsWith("x-amz-meta-") && lower.length > "x-amz-meta-".length) {
      customMetadata[lower.slice("x-amz-meta-".length)] = f.value;
    }
  }
  return {
    httpMetadata: {
      contentType: get("content-type") ?? "application/octet-stream",
      cacheControl: get("cache-control"),
      contentDisposition: get("content-disposition"),
      contentEncoding: get("content-encoding"),
      cacheExpiry: expiry && !Number.isNaN(expiry.getTime()) ? expiry : undefined,
    },
    customMetadata,
  };
}

export async function receivePostObject(
  env: Env,
  request: Request,
  now = new Date(),
): Promise<PostObjectOutcome> {
  const settings = storageSettings(env);
  const form = await parseMultipartForm(request.body, request.headers.get("Content-Type"));
  let consumed = false;
  try {
    if (!form.file) throw noFile();
    const verified = await verifyPostForm({
      fields: form.fields,
      bucket: settings.bucket,
      credentials: (id) => (id === settings.accessKeyId ? settings.secretAccessKey : null),
      region: settings.region,
      now,
      filename: form.file.filename,
    });
    // The service's own ceiling applies to every form, also one whose policy has no
    // content-length-range (such a form is valid on S3, which then caps at 5 GB).
    const range = verified.contentLengthRange;
    const limiter = byteLimiter({
      min: range?.min ?? 0,
      max: Math.min(range?.max ?? settings.maxBytes, settings.maxBytes),
    });
    // A form whose upload already became a document or signature is spent: replaying it
    // would put the file back under its public key after the source was deleted.
    // The database that holds the upload's row (its account's, contract §24); none: no row to mark.
    const home = await uploadHome(env, verified.key);
    const consumedAlready = async () => (home ? isConsumedUpload(home.DB, verified.key) : false);
    if (await consumedAlready()) throw accessDenied(CONSUMED);
    const meta = objectMetadata(verified.fields);
    consumed = true;
    const { object } = await putStream(
      env.FILES,
      verified.key,
      form.file.stream.pipeThrough(limiter.stream),
      meta,
    );
    if (home) await markUploaded(home.DB, verified.key, object, now.getTime());
    // Consumed while this body streamed in: the object must not stay.
    if (await consumedAlready()) {
      await env.FILES.delete(verified.key);
      throw accessDenied(CONSUMED);
    }
    return {
      bucket: settings.bucket,
      key: verified.key,
      object,
      status: verified.successActionStatus,
      redirect: verified.successActionRedirect,
    };
  } finally {
    // A refused form leaves the body unread: release it (the parser holds its reader).
    if (!consumed) await form.file?.stream.cancel().catch(() => {});
  }
}
