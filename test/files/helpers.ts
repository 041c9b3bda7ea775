// Helpers for the file tests: the two-step upload through the real Worker, and images.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { createPostForm } from "../../src/s3/post-policy";
import { call, expectStatus, type Reply } from "../helpers";

export type Form = { url: string; fields: Record<string, string> };

/** POST /file_uploads/ → the FileUpload. */
export async function newFileUpload(token: string, fileName: string, fileType: string) {
  const r = await call("/file_uploads/", { token, body: { file_name: fileName, file_type: fileType } });
  expectStatus(r, 201);
  return r.body;
}

/**
 * Post a form as a browser does: the fields in order, then the file as the last part (a
 * real multipart/form-data body made by FormData).
 */
export async function postForm(
  url: string,
  fields: Record<string, string> | [string, string][],
  file: Uint8Array | null,
  opts: { filename?: string; fileType?: string; after?: [string, string][] } = {},
): Promise<Reply> {
  const fd = new FormData();
  for (const [k, v] of Array.isArray(fields) ? fields : Object.entries(fields)) fd.append(k, v);
  if (file)
    fd.append(
      "file",
      new Blob([file], { type: opts.fileType ?? "application/octet-stream" }),
      opts.filename ?? "file.bin",
    );
  for (const [k, v] of opts.after ?? []) fd.append(k, v);
  return call(url, { method: "POST", raw: fd });
}

/** Create a file upload and post `bytes` to its form; returns the FileUpload. */
export async function uploadFile(token: string, fileName: string, fileType: string, bytes: Uint8Array) {
  const fu = await newFileUpload(token, fileName, fileType);
  const r = await postForm(fu.s3_signature.url, fu.s3_signature.fields, bytes, {
    filename: fileName,
    fileType,
  });
  expectStatus(r, 204);
  return fu;
}

/** A signed form made directly (for forms the API would not issue: expired, tiny limits). */
export async function signedForm(opts: { key: string; contentType: string; maxBytes: number; now?: Date }) {
  const { fields } = await createPostForm({
    accessKeyId: env.STORAGE_ACCESS_KEY_ID,
    secretAccessKey: env.STORAGE_SECRET_ACCESS_KEY,
    region: env.STORAGE_REGION,
    bucket: env.STORAGE_BUCKET,
    key: opts.key,
    contentType: opts.contentType,
    maxBytes: opts.maxBytes,
    now: opts.now,
  });
  return fields;
}

/** The S3 error code of an XML error body. */
export function s3Code(r: Reply): string | null {
  return /<Code>([^<]*)<\/Code>/.exec(r.text)?.[1] ?? null;
}

const unescapeXml = (s: string) =>
  s.replace(
    /&(quot|apos|lt|gt|amp);/g,
    (_, e) => ({ quot: '"', apos: "'", lt: "<", gt: ">", amp: "&" })[e as "quot"],
  );

export function s3Message(r: Reply): string | null {
  const m = /<Message>([^<]*)<\/Message>/.exec(r.text)?.[1];
  return m === undefined ? null : unescapeXml(m);
}

export function expectS3Error(r: Reply, status: number, code: string) {
  expect(`${r.status} ${s3Code(r)}`, r.text.slice(0, 1500)).toBe(`${status} ${code}`);
  expect(r.headers.get("Content-Type")).toBe("application/xml");
}

/** Bytes of a response (call() decodes text; this keeps binary intact). */
export async function fetchBytes(url: string, headers: Record<string, string> = {}, method = "GET") {
  const { exports } = await import("cloudflare:workers");
  const res = await exports.default.fetch(
    new Request(url, {
      method,
      headers: { "CF-Connecting-IP": `198.51.100.${Math.floor(Math.random() * 250)}`, ...headers },
    }),
  );
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

/** A PNG of `w`×`h` with a gradient (made with the same WASM library the thumbnailer uses). */
export async function pngBytes(w: number, h: number, alpha = 255): Promise<Uint8Array> {
  const { PhotonImage } = await import("@cf-wasm/photon");
  const px = new Uint8Array(w * h * 4);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 4;
      px[i] = (x * 255) / w;
      px[i + 1] = (y * 255) / h;
      px[i + 2] = 128;
      px[i + 3] = alpha;
    }
  const img = new PhotonImage(px, w, h);
  try {
    return img.get_bytes();
  } finally {
    img.free();
  }
}

export async function jpegBytes(w: number, h: number): Promise<Uint8Array> {
  const { PhotonImage } = await import("@cf-wasm/photon");
  const png = await pngBytes(w, h);
  const img = PhotonImage.new_from_byteslice(png);
  try {
    return img.get_bytes_jpeg(85);
  } finally {
    img.free();
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `fn` until it returns a truthy value or `timeoutMs` passes. */
export async function eventually<T>(
  fn: () => Promise<T | null | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out waiting");
    await sleep(200);
  }
}
