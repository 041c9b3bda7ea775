import { describe, expect, it } from "vitest";
import { insertTask } from "../factories";
import { fetchBytes, uploadFile } from "../files/helpers";
import { call, expectStatus, newAccount } from "../helpers";

/**
 * Issue 52 item 3: a document or signature opened on a shared phone is not left in the browser's
 * HTTP cache for the next user (RFC 9111 §5.2.2.5 `no-store`, §5.2.2.7 `private`), and signing
 * out clears what is there (W3C Clear Site Data, `"cache"`).
 */
async function attached(collection: "documents" | "signatures", extra: Record<string, unknown> = {}) {
  const { admin, account } = await newAccount();
  const task = await insertTask(account.id);
  const png = Uint8Array.from(
    atob(
      "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==",
    ),
    (c) => c.charCodeAt(0),
  );
  const fu = await uploadFile(admin.token, "proof.png", "image/png", png);
  const r = await call(`/${collection}/`, {
    token: admin.token,
    body: { account: account.url, task: task.url, file_upload: fu.url, ...extra },
  });
  expectStatus(r, 201);
  return { admin, file: r.body.file as string, fu };
}

describe("stored files are not kept in a shared browser's cache", () => {
  it("a document and a signature are served private, no-store, with their ETag and ranges", async () => {
    for (const collection of ["documents", "signatures"] as const) {
      const { file } = await attached(collection);
      expect(file).toContain(`/files/${collection}/`);
      const whole = await fetchBytes(file);
      expect(whole.status, collection).toBe(200);
      expect(whole.headers.get("Cache-Control"), collection).toBe("private, no-store");
      const etag = whole.headers.get("ETag");
      expect(etag).toBeTruthy();
      const part = await fetchBytes(file, { Range: "bytes=0-3" });
      expect(part.status).toBe(206);
      expect(part.headers.get("Cache-Control")).toBe("private, no-store");
      const same = await fetchBytes(file, { "If-None-Match": etag! });
      expect(same.status).toBe(304);
      expect(same.headers.get("Cache-Control")).toBe("private, no-store");
    }
  });

  it("a file upload's own file (before it is attached) is served private, no-store too", async () => {
    const { admin } = await newAccount();
    const fu = await uploadFile(admin.token, "note.txt", "text/plain", new TextEncoder().encode("hello"));
    const r = await fetchBytes(fu.file);
    expect(r.status).toBe(200);
    expect(r.headers.get("Cache-Control")).toBe("private, no-store");
  });

  it("a Cache-Control the document was stored with (s3_response_headers) is kept", async () => {
    const { file } = await attached("documents", {
      s3_response_headers: { "Cache-Control": "public, max-age=60" },
    });
    expect((await fetchBytes(file)).headers.get("Cache-Control")).toBe("public, max-age=60");
  });

  it('POST /logout/ answers Clear-Site-Data: "cache"', async () => {
    const { admin } = await newAccount();
    const r = await call("/logout/", { method: "POST", token: admin.token });
    expectStatus(r, 204);
    expect(r.headers.get("Clear-Site-Data")).toBe('"cache"');
  });
});
