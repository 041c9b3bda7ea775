/**
 * Storing a stream of unknown length in R2 without holding it whole.
 *
 * R2's `put` needs the length up front (a ReadableStream without a known length is refused),
 * and a multipart/form-data file part has none: its end is found only when its closing
 * delimiter goes by. So the stream is cut into parts:
 *
 * - bytes are gathered into a part buffer of `partSize` (8 MiB by default);
 * - if the stream ends before the buffer is full, the body is one `put` of those bytes;
 * - otherwise a multipart upload is opened and each full part is sent with `uploadPart`
 *   once a byte beyond it has arrived (so the last part is never empty), with at most one
 *   part in flight while the next one fills: two part buffers at most, whatever the size.
 *
 * R2 multipart rules ("R2 multipart upload", Cloudflare docs, mirroring S3's
 * UploadPart/CompleteMultipartUpload): parts are numbered from 1; every part but the last is
 * at least 5 MiB, and all parts but the last have the same size. An error (a size limit passed
 * while streaming, a truncated body, R2 itself) aborts the multipart upload so that no part
 * is left billed and no object is created.
 */

export const DEFAULT_PART_SIZE = 8 * 1024 * 1024;
/** R2's (and S3's) smallest part but the last. */
export const MIN_PART_SIZE = 5 * 1024 * 1024;
/** First allocation for a body that may turn out small (a signature is a few KiB). */
const INITIAL_BUFFER = 64 * 1024;

export interface PutStreamOptions {
  httpMetadata?: R2HTTPMetadata;
  customMetadata?: Record<string, string>;
  /** Part size; tests use a smaller one (any value is allowed here, R2 enforces its minimum). */
  partSize?: number;
}

export interface PutStreamResult {
  object: R2Object;
  /** Whether a multipart upload was used (more than one part). */
  multipart: boolean;
  parts: number;
}

export async function putStream(
  bucket: R2Bucket,
  key: string,
  stream: ReadableStream<Uint8Array>,
  options: PutStreamOptions = {},
): Promise<PutStreamResult> {
  const partSize = options.partSize ?? DEFAULT_PART_SIZE;
  const putOptions = { httpMetadata: options.httpMetadata, customMetadata: options.customMetadata };
  const reader = stream.getReader();

  let buf: Uint8Array = new Uint8Array(Math.min(INITIAL_BUFFER, partSize));
  let fill = 0;
  /** A part buffer whose upload finished, ready to be filled again. */
  let spare: Uint8Array | null = null;
  let upload: R2MultipartUpload | null = null;
  const parts: R2UploadedPart[] = [];
  let inflight: Promise<void> | null = null;

  const sendFullPart = async () => {
    upload ??= await bucket.createMultipartUpload(key, putOptions);
    if (inflight) await inflight; // one part in flight at most: memory stays at two buffers
    const full = buf;
    const partNumber = parts.length + 1;
    parts.push(null as unknown as R2UploadedPart); // reserve the slot so numbering stays in order
    const u = upload;
    inflight = u.uploadPart(partNumber, full).then((p) => {
      parts[partNumber - 1] = p;
      spare = full;
    });
    // Observed here so a failure between two reads is not reported as unhandled; the next
    // `await inflight` still throws it.
    inflight.catch(() => {});
    buf = spare ?? new Uint8Array(partSize);
    spare = null;
    fill = 0;
  };

  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let off = 0;
      while (off < value.length) {
        if (fill === partSize) await sendFullPart(); // a byte beyond a full part: it is not the last
        if (fill === buf.length) {
          // Only the first buffer grows (a small body never costs a whole part).
          const next = new Uint8Array(Math.min(partSize, buf.length * 2));
          next.set(buf.subarray(0, fill));
          buf = next;
        }
        const n = Math.min(buf.length - fill, value.length - off);
        buf.set(value.subarray(off, off + n), fill);
        fill += n;
        off += n;
      }
    }
    if (!upload) {
      const object = await bucket.put(key, buf.subarray(0, fill), putOptions);
      // `put` resolves null only with unmet onlyIf conditions, which are not used here.
      return { object: object!, multipart: false, parts: 1 };
    }
    const u: R2MultipartUpload = upload;
    if (inflight) await inflight;
    inflight = null;
    parts.push(await u.uploadPart(parts.length + 1, buf.subarray(0, fill)));
    const object = await u.complete(parts);
    return { object, multipart: true, parts: parts.length };
  } catch (err) {
    reader.cancel(err).catch(() => {});
    if (upload) {
      const u: R2MultipartUpload = upload;
      await (inflight as Promise<void> | null)?.catch(() => {});
      await u.abort().catch(() => {});
    }
    throw err;
  }
}
