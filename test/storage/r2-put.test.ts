// putStream: a stream of unknown length into R2, one put or a multipart upload, never whole.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ByteLimitError, byteLimiter } from "../../src/s3/multipart";
import { MIN_PART_SIZE, putStream } from "../../src/s3/r2-put";
import { bytesEqual, chunkedSource, pseudoRandomBytes } from "./helpers";

/** The real local bucket, with its multipart calls recorded. */
function recordingBucket() {
  const log: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const bucket = new Proxy(env.FILES, {
    get(target, prop) {
      if (prop === "put") {
        return (key: string, value: any, opts: any) => {
          log.push(`put ${value?.byteLength ?? "?"}`);
          return target.put(key, value, opts);
        };
      }
      if (prop === "createMultipartUpload") {
        return async (key: string, opts: any) => {
          log.push("create");
          const u = await target.createMultipartUpload(key, opts);
          return {
            uploadPart: async (n: number, v: Uint8Array) => {
              inFlight++;
              maxInFlight = Math.max(maxInFlight, inFlight);
              log.push(`part ${n} ${v.byteLength}`);
              try {
                return await u.uploadPart(n, v);
              } finally {
                inFlight--;
              }
            },
            complete: (parts: R2UploadedPart[]) => {
              log.push(`complete ${parts.length}`);
              return u.complete(parts);
            },
            abort: () => {
              log.push("abort");
              return u.abort();
            },
          };
        };
      }
      const v = (target as any)[prop];
      return typeof v === "function" ? v.bind(target) : v;
    },
  }) as R2Bucket;
  return { bucket, log, maxInFlight: () => maxInFlight };
}

async function read(key: string) {
  const o = await env.FILES.get(key);
  return new Uint8Array(await o!.arrayBuffer());
}

describe("putStream", () => {
  it("puts a body smaller than one part with one put", async () => {
    const rec = recordingBucket();
    const content = pseudoRandomBytes(300_000, 1);
    const key = `test/${crypto.randomUUID()}`;
    const r = await putStream(rec.bucket, key, chunkedSource(content, 4096).stream, {
      httpMetadata: { contentType: "text/plain" },
    });
    expect(rec.log).toEqual(["put 300000"]);
    expect(r.multipart).toBe(false);
    expect(r.object.size).toBe(300_000);
    expect(bytesEqual(await read(key), content)).toBe(true);
    expect((await env.FILES.head(key))?.httpMetadata?.contentType).toBe("text/plain");
  });

  it("uses equal parts and a shorter last one, one part in flight at a time", async () => {
    const rec = recordingBucket();
    const size = MIN_PART_SIZE * 2 + 1000;
    const content = pseudoRandomBytes(size, 2);
    const key = `test/${crypto.randomUUID()}`;
    const r = await putStream(rec.bucket, key, chunkedSource(content, [65_536, 1, 333_333]).stream, {
      partSize: MIN_PART_SIZE,
    });
    expect(rec.log).toEqual([
      "create",
      `part 1 ${MIN_PART_SIZE}`,
      `part 2 ${MIN_PART_SIZE}`,
      "part 3 1000",
      "complete 3",
    ]);
    expect(rec.maxInFlight()).toBe(1);
    expect(r.object.etag).toMatch(/-3$/);
    expect(bytesEqual(await read(key), content)).toBe(true);
  });

  it("never sends an empty last part: a body of exactly one part is one put", async () => {
    const rec = recordingBucket();
    const key = `test/${crypto.randomUUID()}`;
    await putStream(rec.bucket, key, chunkedSource(pseudoRandomBytes(MIN_PART_SIZE, 3), 1 << 20).stream, {
      partSize: MIN_PART_SIZE,
    });
    expect(rec.log).toEqual([`put ${MIN_PART_SIZE}`]);
  });

  it("aborts the multipart upload when the stream fails (a size limit passed mid-way)", async () => {
    const rec = recordingBucket();
    const key = `test/${crypto.randomUUID()}`;
    const limiter = byteLimiter({ max: MIN_PART_SIZE + 1.5 * 1024 * 1024 });
    const source = chunkedSource(pseudoRandomBytes(MIN_PART_SIZE * 2, 4), 1 << 20);
    const err = await putStream(rec.bucket, key, source.stream.pipeThrough(limiter.stream), {
      partSize: MIN_PART_SIZE,
    }).catch((e) => e);
    expect(err).toBeInstanceOf(ByteLimitError);
    expect(rec.log[0]).toBe("create");
    expect(rec.log.at(-1)).toBe("abort");
    expect(rec.log).not.toContain("complete 2");
    expect(await env.FILES.head(key)).toBeNull();
    expect(source.cancelled).toBe(true);
  });
});
