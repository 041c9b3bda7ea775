/**
 * The storage surface this Worker serves in front of R2 (contract §8):
 *
 * - `POST /storage/` (and `/storage`): `{upload_url}`, S3's POST Object. Anonymous: the signed
 *   policy is the authorization, as on S3. Answers S3's statuses and XML errors.
 * - `GET`/`HEAD /files/<key>`: the stored objects, anonymous like S3 `public-read` objects;
 *   the UUID inside every key is the capability (see storage/keys.ts).
 *
 * Both are outside the JSON API (no trailing-slash rule, no JSON body limit: `isNonApiPath`),
 * and are registered in the OpenAPI document by hand, because a validated multipart body
 * would be read whole, which this endpoint exists to avoid.
 */
import { z } from "@hono/zod-openapi";
import type { Ctx, Router } from "../../http/openapi";
import { FILES_PREFIX, STORAGE_PREFIX } from "../../http/urls";
import { fileUrl, keyFromFilesPath } from "../../s3/keys";
import { postResponseXml, S3Error, s3ErrorResponse, toS3Error } from "../../s3/s3-errors";
import { serveObject } from "../../s3/serve";
import { checkLink, isPrivateKey } from "../../s3/signed-links";
import { type PostObjectOutcome, receivePostObject } from "../../services/files/storage-post";

const tags = ["Storage"];

/**
 * Browser uploads are the point of a POST policy, so the endpoint answers CORS: a
 * multipart/form-data POST is a CORS "simple request", and the preflight below covers
 * clients that add headers. The policy, not the origin, decides what is accepted.
 */
const CORS_POST = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers": "ETag, Location, x-amz-request-id",
};

function withHeaders(res: Response, headers: Record<string, string>): Response {
  for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
  return res;
}

function preflight(methods: string) {
  return (c: Ctx) =>
    new Response(null, {
      status: 204,
      headers: {
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Allow-Methods": methods,
        "Access-Control-Allow-Headers": c.req.header("Access-Control-Request-Headers") ?? "*",
        "Access-Control-Max-Age": "3000",
      },
    });
}

/**
 * S3's success answers (RESTObjectPOST): a 303 to `success_action_redirect` with bucket, key
 * and etag in the query when it is a URL (otherwise it is ignored, as on S3); else the
 * status asked for, 201 with the PostResponse XML, 200 and 204 empty; ETag and Location
 * headers on each.
 */
function postSuccess(c: Ctx, out: PostObjectOutcome): Response {
  const requestId = c.get("requestId");
  const location = fileUrl(c.get("baseUrl"), out.key);
  const headers: Record<string, string> = {
    ...CORS_POST,
    ETag: out.object.httpEtag,
    Location: location,
    "x-amz-request-id": requestId,
  };
  if (out.redirect) {
    try {
      const target = new URL(out.redirect);
      target.searchParams.set("bucket", out.bucket);
      target.searchParams.set("key", out.key);
      target.searchParams.set("etag", out.object.httpEtag);
      return new Response(null, { status: 303, headers: { ...headers, Location: target.toString() } });
    } catch {
      // not a URL: S3 falls back to success_action_status
    }
  }
  if (out.status === 201) {
    const xml = postResponseXml({ location, bucket: out.bucket, key: out.key, etag: out.object.etag });
    return new Response(xml, { status: 201, headers: { ...headers, "Content-Type": "application/xml" } });
  }
  return new Response(null, { status: out.status, headers });
}

async function postObject(c: Ctx): Promise<Response> {
  const requestId = c.get("requestId");
  try {
    return postSuccess(c, await receivePostObject(c.env, c.req.raw));
  } catch (err) {
    const s3 = toS3Error(err);
    if (s3.status >= 500) {
      console.error(
        JSON.stringify({
          level: "error",
          request_id: requestId,
          error: String(err),
          stack: (err as Error)?.stack,
        }),
      );
    }
    return withHeaders(s3ErrorResponse(s3, requestId), CORS_POST);
  }
}

async function getObject(c: Ctx): Promise<Response> {
  const requestId = c.get("requestId");
  const key = keyFromFilesPath(new URL(c.req.url).pathname);
  if (key === null) {
    const err = new S3Error(404, "NoSuchKey", "The specified key does not exist.");
    return s3ErrorResponse(err, requestId);
  }
  if (isPrivateKey(key)) {
    // Exports and archives: only through a signed, unexpired link (./s3/signed-links.ts), in S3's
    // words for a presigned URL that fails.
    const check = await checkLink(c.env, key, new URL(c.req.url));
    if (check !== "ok") {
      const message =
        check === "expired"
          ? "Request has expired"
          : check === "missing"
            ? "This file needs a signed link: read its object again for a fresh one."
            : "The request signature we calculated does not match the signature you provided.";
      return s3ErrorResponse(new S3Error(403, "AccessDenied", message), requestId);
    }
    const res = await serveObject(c.env.FILES, key, c.req.raw, requestId);
    res.headers.delete("Access-Control-Allow-Origin");
    res.headers.delete("Access-Control-Expose-Headers");
    return withHeaders(res, { "Cache-Control": "private, no-store" });
  }
  // Hono answers HEAD with the GET route and drops the body; the method is still HEAD here.
  return serveObject(c.env.FILES, key, c.req.raw, requestId);
}

function methodNotAllowed(allow: string) {
  return (c: Ctx) => {
    const err = new S3Error(
      405,
      "MethodNotAllowed",
      "The specified method is not allowed against this resource.",
      {
        Method: c.req.method,
        ResourceType: "OBJECT",
      },
    );
    return withHeaders(s3ErrorResponse(err, c.get("requestId")), { Allow: allow });
  };
}

export function mountStorage(app: Router) {
  for (const path of [`${STORAGE_PREFIX}/`, STORAGE_PREFIX]) {
    app.post(path, postObject);
    app.options(path, preflight("POST"));
  }
  app.get(`${FILES_PREFIX}/*`, getObject);
  app.options(`${FILES_PREFIX}/*`, preflight("GET, HEAD"));
  app.on(["POST", "PUT", "PATCH", "DELETE"], `${FILES_PREFIX}/*`, methodNotAllowed("GET, HEAD"));

  const xml = (description: string) => ({
    description,
    content: { "application/xml": { schema: z.string() } },
  });
  app.openAPIRegistry.registerPath({
    method: "post",
    path: `${STORAGE_PREFIX}/`,
    tags,
    summary: "Upload a file with a signed form ({upload_url})",
    description:
      "S3's POST Object (AWS Signature Version 4 POST policy), served by this Worker in front of R2. " +
      "Post `s3_signature.fields` of a file upload as they are, then the file as the LAST part named `file`. " +
      "Anonymous: the policy's signature is the authorization. Field names are case-insensitive; every field but " +
      "`policy`, `x-amz-signature`, `file` and `x-ignore-*` must be covered by a policy condition; parts after the " +
      "file are ignored; form fields before the file are limited to 64 KiB. The file is streamed into R2 and " +
      "`content-length-range` is enforced while it streams. Errors are S3's XML (`<Error><Code>`): 403 " +
      "`SignatureDoesNotMatch`, `AccessDenied` (expired policy, failed condition, extra field), `InvalidAccessKeyId`; " +
      "400 `EntityTooLarge`, `EntityTooSmall`, `InvalidArgument` (missing field or no file), `InvalidPolicyDocument`, " +
      "`MalformedPOSTRequest`, `MaxPostPreDataLengthExceeded`; 412 when the body is not multipart/form-data.",
    request: {
      body: {
        required: true,
        content: {
          "multipart/form-data": {
            schema: z.object({
              acl: z.string(),
              "Content-Type": z.string(),
              key: z.string(),
              "x-amz-algorithm": z.string(),
              "x-amz-credential": z.string(),
              "x-amz-date": z.string(),
              policy: z.string(),
              "x-amz-signature": z.string(),
              success_action_status: z.enum(["200", "201", "204"]).optional(),
              file: z.string().openapi({ format: "binary" }),
            }),
          },
        },
      },
    },
    responses: {
      204: { description: "Stored (default). `ETag` and `Location` (the file's URL) headers." },
      200: { description: "Stored, with `success_action_status=200`." },
      201: xml(
        "Stored, with `success_action_status=201`: `<PostResponse>` with Location, Bucket, Key, ETag.",
      ),
      303: { description: "Stored, with `success_action_redirect`: redirect with bucket, key and etag." },
      400: xml("S3 error (see above)."),
      403: xml("S3 error (see above)."),
      412: xml("Not multipart/form-data."),
    },
  });
  app.openAPIRegistry.registerPath({
    method: "get",
    path: `${FILES_PREFIX}/{key}`,
    tags,
    summary: "Download a stored file (a FileUpload's, Document's or Signature's `file`, or a `thumbnail`)",
    description:
      "Anonymous, like an S3 public-read object: the unguessable UUID in the key is the capability. `key` may " +
      "contain slashes; each segment is percent-encoded. Served with the stored Content-Type (a document's detected " +
      "`mimetype`, or its `s3_response_headers`), `ETag`, `Last-Modified`, `Accept-Ranges: bytes`. One byte range " +
      "(RFC 7233) → 206 with Content-Range, unsatisfiable → 416; several ranges → the whole file (200). Conditional " +
      "requests (RFC 7232): If-None-Match / If-Modified-Since → 304, If-Match / If-Unmodified-Since → 412, " +
      "If-Range. HEAD answers the same headers. Sent with `X-Content-Type-Options: nosniff` and " +
      "`Content-Security-Policy: sandbox`. Errors are S3's XML (404 `NoSuchKey`).",
    request: {
      params: z.object({
        key: z.string().openapi({ param: { name: "key", in: "path" }, description: "Object key." }),
      }),
    },
    responses: {
      200: { description: "The file.", content: { "application/octet-stream": { schema: z.string() } } },
      206: { description: "One byte range of the file." },
      304: { description: "Not modified." },
      404: xml("NoSuchKey."),
      412: xml("PreconditionFailed."),
      416: xml("InvalidRange."),
    },
  });
}
