/** Issuing the signed POST form the service returns in `s3_signature.fields`. */
import { amzDate, amzShortDate, credentialScope, deriveSigningKey, hmacHex, SIGV4_ALGORITHM } from "../sigv4";
import { base64EncodeUtf8 } from "./base64";
import { SERVICE } from "./credential";

export interface CreatePostFormOptions {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  bucket: string;
  key: string;
  contentType: string;
  acl?: string;
  /** Largest accepted file, in bytes (`["content-length-range", 0, maxBytes]`). */
  maxBytes: number;
  expiresInSeconds?: number;
  now?: Date;
}

export interface PostForm {
  /**
   * Exactly: acl, Content-Type, key, x-amz-algorithm, x-amz-credential, x-amz-date, policy,
   * x-amz-signature, in that order (the order interface §2.1 lists them; a client posts them
   * before `file`).
   */
  fields: Record<string, string>;
}

/**
 * Issue a signed POST form for one object key. The policy pins the bucket, the exact key,
 * the acl, the Content-Type and the three SigV4 fields, and bounds the size, so the form
 * uploads exactly one object of the announced type.
 */
export async function createPostForm(opts: CreatePostFormOptions): Promise<PostForm> {
  const acl = opts.acl ?? "public-read";
  const expiresInSeconds = opts.expiresInSeconds ?? 3600;
  const now = opts.now ?? new Date();
  if (!Number.isSafeInteger(opts.maxBytes) || opts.maxBytes < 0) {
    throw new RangeError("createPostForm: maxBytes must be a non-negative integer");
  }
  if (!(expiresInSeconds > 0)) throw new RangeError("createPostForm: expiresInSeconds must be positive");

  const xAmzDate = amzDate(now);
  const date = amzShortDate(now);
  const credential = `${opts.accessKeyId}/${credentialScope(date, opts.region, SERVICE)}`;
  const policyDocument = {
    // ISO 8601 in UTC with milliseconds, the form of the S3 docs' examples.
    expiration: new Date(now.getTime() + expiresInSeconds * 1000).toISOString(),
    conditions: [
      { bucket: opts.bucket },
      { key: opts.key },
      { acl },
      { "Content-Type": opts.contentType },
      { "x-amz-algorithm": SIGV4_ALGORITHM },
      { "x-amz-credential": credential },
      { "x-amz-date": xAmzDate },
      ["content-length-range", 0, opts.maxBytes],
    ],
  };
  const policy = base64EncodeUtf8(JSON.stringify(policyDocument));
  const signingKey = await deriveSigningKey(opts.secretAccessKey, date, opts.region, SERVICE);
  const signature = await hmacHex(signingKey, policy);
  return {
    fields: {
      acl,
      "Content-Type": opts.contentType,
      key: opts.key,
      "x-amz-algorithm": SIGV4_ALGORITHM,
      "x-amz-credential": credential,
      "x-amz-date": xAmzDate,
      policy,
      "x-amz-signature": signature,
    },
  };
}

// ------------------------------------------------------------------------------------------
// Verifying a received form
