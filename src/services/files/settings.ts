/**
 * Settings of the storage forms (docs/configuration.md; contract §10).
 *
 * `UPLOAD_MAX_BYTES` is an optional var (default 100 MiB). It is capped at R2's largest
 * single `put` (5 GiB less 5 MiB), because a document is copied from its upload with one
 * `put` of a stream of known length.
 */
export const DEFAULT_UPLOAD_MAX_BYTES = 100 * 1024 * 1024;
export const MAX_UPLOAD_MAX_BYTES = 5 * 1024 ** 3 - 5 * 1024 ** 2;
/** Lifetime of an upload policy (contract §10: 1 hour). */
export const UPLOAD_POLICY_SECONDS = 3600;

export type StorageSettings = {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  bucket: string;
  maxBytes: number;
};

type FilesEnv = Pick<Env, "STORAGE_ACCESS_KEY_ID" | "STORAGE_SECRET_ACCESS_KEY"> & {
  STORAGE_REGION?: string;
  STORAGE_BUCKET?: string;
  UPLOAD_MAX_BYTES?: string;
};

export function uploadMaxBytes(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return DEFAULT_UPLOAD_MAX_BYTES;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) {
    console.error(
      JSON.stringify({ level: "error", msg: "UPLOAD_MAX_BYTES is not a byte count", value: raw }),
    );
    return DEFAULT_UPLOAD_MAX_BYTES;
  }
  return Math.min(n, MAX_UPLOAD_MAX_BYTES);
}

export function storageSettings(env: Env): StorageSettings {
  const e = env as unknown as FilesEnv;
  return {
    accessKeyId: e.STORAGE_ACCESS_KEY_ID,
    secretAccessKey: e.STORAGE_SECRET_ACCESS_KEY,
    region: e.STORAGE_REGION || "auto",
    bucket: e.STORAGE_BUCKET || "field-dispatch-files",
    maxBytes: uploadMaxBytes(e.UPLOAD_MAX_BYTES),
  };
}
