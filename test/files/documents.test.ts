// The two-step upload end to end, documents and signatures (interface §2.2, §2.3, §4.1–4.3;
// contract §8, §9), all through the real Worker and its real local D1, R2 and queue.

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { uuidv7 } from "../../src/lib/ids";
import { insertTask } from "../factories";
import { addUser, call, expectStatus, newAccount, storedEvents } from "../helpers";
import { bytesEqual, pseudoRandomBytes } from "../storage/helpers";
import { stored } from "../stored";
import {
  eventually,
  expectS3Error,
  fetchBytes,
  jpegBytes,
  newFileUpload,
  pngBytes,
  postForm,
  uploadFile,
} from "./helpers";

const NOT_EXIST = "Invalid hyperlink - Object does not exist.";

async function attach(token: string, collection: "documents" | "signatures", body: Record<string, unknown>) {
  return call(`/${collection}/`, { token, body });
}

/** A fresh account with one unassigned task and a small text document attached to it. */
async function taskWithDocument(name: string, text: string) {
  const { admin, account } = await newAccount();
  const task = await insertTask(account.id);
  const fu = await uploadFile(admin.token, name, "text/plain", new TextEncoder().encode(text));
  const d = await attach(admin.token, "documents", {
    account: account.url,
    task: task.url,
    file_upload: fu.url,
  });
  expectStatus(d, 201);
  return { admin, account, task, d };
}

describe("POST /file_uploads/", () => {
  it("returns the file upload with a SigV4 form for {upload_url}", async () => {
    const { admin, account } = await newAccount();
    const r = await call("/file_uploads/", {
      token: admin.token,
      body: { file_name: "Übersicht 2026 #1.pdf", file_type: "application/pdf", source: "integration" },
    });
    expectStatus(r, 201);
    const fu = r.body;
    expect(fu.url).toBe(`https://api.test/file_uploads/${fu.id}/`);
    expect(fu.file).toBe(`https://api.test/files/fileupload/${fu.id}/%C3%9Cbersicht%202026%20%231.pdf`);
    expect(fu.created_by).toBe(admin.user);
    expect(fu.source).toBe("integration");
    expect(fu.uploaded_at).toBeNull();
    expect(fu.s3_signature.url).toBe("https://api.test/storage/");
    const f = fu.s3_signature.fields;
    expect(Object.keys(f)).toEqual([
      "acl",
      "Content-Type",
      "key",
      "x-amz-algorithm",
      "x-amz-credential",
      "x-amz-date",
      "policy",
      "x-amz-signature",
    ]);
    expect(f.acl).toBe("public-read");
    expect(f["Content-Type"]).toBe("application/pdf");
    expect(f.key).toBe(`fileupload/${fu.id}/Übersicht 2026 #1.pdf`);
    expect(f["x-amz-algorithm"]).toBe("AWS4-HMAC-SHA256");
    expect(f["x-amz-credential"]).toMatch(
      new RegExp(`^${env.STORAGE_ACCESS_KEY_ID}/\\d{8}/${env.STORAGE_REGION}/s3/aws4_request$`),
    );
    expect(f["x-amz-signature"]).toMatch(/^[0-9a-f]{64}$/);
    const policy = JSON.parse(
      new TextDecoder().decode(Uint8Array.from(atob(f.policy), (c) => c.charCodeAt(0))),
    );
    const expiresIn = Date.parse(policy.expiration) - Date.parse(fu.created_at);
    expect(expiresIn).toBe(3600_000);
    expect(policy.conditions).toContainEqual(["content-length-range", 0, 100 * 1024 * 1024]);
    expect(policy.conditions).toContainEqual({ bucket: env.STORAGE_BUCKET });
    expect(policy.conditions).toContainEqual({ key: f.key });

    // Detail gives the same form (signed again from the stored creation time), list has it.
    const detail = await call(fu.url, { token: admin.token });
    expectStatus(detail, 200);
    expect(detail.body).toEqual(fu);
    const list = await call("/file_uploads/", { token: admin.token });
    expectStatus(list, 200);
    expect(list.body.results.map((x: any) => x.id)).toEqual([fu.id]);
    expect(account.id).toBeTruthy();
  });

  it("validates the file name and type, and hides other accounts' uploads", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const bad = await call("/file_uploads/", {
      token: a.admin.token,
      body: { file_name: "../x", file_type: "nope" },
    });
    expectStatus(bad, 400);
    expect(Object.keys(bad.body).sort()).toEqual(["file_name", "file_type"]);
    const missing = await call("/file_uploads/", { token: a.admin.token, body: {} });
    expect(missing.body.file_name).toEqual(["This field is required."]);
    const fu = await newFileUpload(a.admin.token, "a.txt", "text/plain");
    expectStatus(await call(fu.url, { token: b.admin.token }), 404);
    expect((await call("/file_uploads/", { token: b.admin.token })).body.results).toEqual([]);
    expectStatus(await call("/file_uploads/?colour=red", { token: a.admin.token }), 400);
    expectStatus(await call("/file_uploads/", {}), 401);
  });
});

describe("the two-step flow: upload, attach, download", () => {
  it("attaches a PNG declared as application/octet-stream: image/png, same bytes, ranges, thumbnail", async () => {
    const { admin, account } = await newAccount();
    const task = await insertTask(account.id);
    const png = await pngBytes(640, 480);
    const fu = await uploadFile(admin.token, "proof of delivery.png", "application/octet-stream", png);

    const d = await attach(admin.token, "documents", {
      account: account.url,
      task: task.url,
      file_upload: fu.url,
      description: "front door",
      s3_response_headers: { "Content-Disposition": 'attachment; filename="pod.png"' },
    });
    expectStatus(d, 201);
    const doc = d.body;
    expect(doc.file_name).toBe("proof_of_delivery.png");
    expect(doc.file).toBe(`https://api.test/files/documents/${doc.id}/proof_of_delivery.png`);
    expect(doc.mimetype).toBe("image/png");
    expect(doc.thumbnail).toBeNull();
    expect(doc.task).toBe(task.url);
    expect(doc.account).toBe(account.url);
    expect(doc.file_upload).toBe(fu.url);
    expect(doc.description).toBe("front door");
    expect(doc.visible_to_worker).toBe(true);
    expect(doc.visible_to_client).toBe(false);
    expect(doc).not.toHaveProperty("s3_response_headers");

    // The same bytes, with the detected type and the document's response headers.
    const got = await fetchBytes(doc.file);
    expect(got.status).toBe(200);
    expect(bytesEqual(got.bytes, png)).toBe(true);
    expect(got.headers.get("Content-Type")).toBe("image/png");
    expect(got.headers.get("Content-Disposition")).toBe('attachment; filename="pod.png"');
    expect(got.headers.get("Content-Length")).toBe(String(png.length));
    expect(got.headers.get("Accept-Ranges")).toBe("bytes");
    const etag = got.headers.get("ETag")!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);

    // RFC 7233: one range → 206 with exactly those bytes.
    const part = await fetchBytes(doc.file, { Range: "bytes=100-1099" });
    expect(part.status).toBe(206);
    expect(part.headers.get("Content-Range")).toBe(`bytes 100-1099/${png.length}`);
    expect(part.headers.get("Content-Length")).toBe("1000");
    expect(bytesEqual(part.bytes, png.subarray(100, 1100))).toBe(true);
    const tail = await fetchBytes(doc.file, { Range: "bytes=-10" });
    expect(tail.status).toBe(206);
    expect(bytesEqual(tail.bytes, png.subarray(png.length - 10))).toBe(true);
    const beyond = await fetchBytes(doc.file, { Range: `bytes=${png.length}-` });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get("Content-Range")).toBe(`bytes */${png.length}`);
    // RFC 7232: conditional GET.
    expect((await fetchBytes(doc.file, { "If-None-Match": etag })).status).toBe(304);
    expect((await fetchBytes(doc.file, { "If-None-Match": '"other"' })).status).toBe(200);
    const lastModified = got.headers.get("Last-Modified")!;
    expect((await fetchBytes(doc.file, { "If-Modified-Since": lastModified })).status).toBe(304);
    expect((await fetchBytes(doc.file, { "If-Match": '"other"' })).status).toBe(412);
    expect((await fetchBytes(doc.file, { Range: "bytes=0-9", "If-Range": '"stale"' })).status).toBe(200);
    const head = await fetchBytes(doc.file, {}, "HEAD");
    expect(head.status).toBe(200);
    expect(head.bytes.length).toBe(0);
    expect(head.headers.get("ETag")).toBe(etag);
    expect(head.headers.get("Content-Length")).toBe(String(png.length));

    // The thumbnail comes from the files queue.
    const withThumb = await eventually(async () => {
      const r = await call(doc.url, { token: admin.token });
      return r.body.thumbnail ? r.body : null;
    });
    expect(withThumb.thumbnail).toBe(`https://api.test/files/documents/${doc.id}/thumbnails/200.png`);
    const thumb = await fetchBytes(withThumb.thumbnail);
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get("Content-Type")).toBe("image/png");
    const { PhotonImage } = await import("@cf-wasm/photon");
    const img = PhotonImage.new_from_byteslice(thumb.bytes);
    expect([img.get_width(), img.get_height()]).toEqual([200, 150]);
    img.free();

    // The upload's own file was deleted once copied, and its form cannot put it back.
    expect((await fetchBytes(fu.file)).status).toBe(404);
    const replay = await postForm(fu.s3_signature.url, fu.s3_signature.fields, png, {
      filename: "proof of delivery.png",
      fileType: "application/octet-stream",
    });
    expectS3Error(replay, 403, "AccessDenied");
    expect((await fetchBytes(fu.file)).status).toBe(404);

    // Deleting the document removes its file and its thumbnail.
    expectStatus(await call(doc.url, { method: "DELETE", token: admin.token }), 204);
    expect((await fetchBytes(doc.file)).status).toBe(404);
    expect((await fetchBytes(withThumb.thumbnail)).status).toBe(404);
  });

  it("makes a JPEG thumbnail of a JPEG signature, and none for a PDF", async () => {
    const { admin, account } = await newAccount();
    const task = await insertTask(account.id);
    const jpg = await jpegBytes(300, 900);
    const fu = await uploadFile(admin.token, "photo.jpg", "image/jpeg", jpg);
    const d = await attach(admin.token, "signatures", {
      account: account.url,
      task: task.url,
      file_upload: fu.url,
    });
    expectStatus(d, 201);
    expect(d.body.mimetype).toBe("image/jpeg");
    expect(d.body.url).toBe(`https://api.test/signatures/${d.body.id}/`);
    expect(d.body.file).toBe(`https://api.test/files/signatures/${d.body.id}/photo.jpg`);
    const sig = await eventually(async () =>
      (await call(d.body.url, { token: admin.token })).body.thumbnail
        ? (await call(d.body.url, { token: admin.token })).body
        : null,
    );
    const thumb = await fetchBytes(sig.thumbnail);
    expect(thumb.headers.get("Content-Type")).toBe("image/jpeg");
    const { PhotonImage } = await import("@cf-wasm/photon");
    const img = PhotonImage.new_from_byteslice(thumb.bytes);
    expect([img.get_width(), img.get_height()]).toEqual([67, 200]);
    img.free();

    const pdf = new TextEncoder().encode("%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n%%EOF\n");
    const fu2 = await uploadFile(admin.token, "manifest.pdf", "image/png", pdf);
    const d2 = await attach(admin.token, "documents", {
      account: account.url,
      task: task.url,
      file_upload: fu2.url,
    });
    expectStatus(d2, 201);
    expect(d2.body.mimetype).toBe("application/pdf");
    expect((await fetchBytes(d2.body.file)).headers.get("Content-Type")).toBe("application/pdf");
    // No thumbnail message is sent for a PDF; a little later it is still null.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await call(d2.body.url, { token: admin.token })).body.thumbnail).toBeNull();
  });
});

describe("creating a document: references", () => {
  it("answers 400 to a file upload that was never uploaded, of another account, or already attached", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const task = await insertTask(a.account.id);
    const pending = await newFileUpload(a.admin.token, "later.txt", "text/plain");
    const r1 = await attach(a.admin.token, "documents", {
      account: a.account.url,
      task: task.url,
      file_upload: pending.url,
    });
    expectStatus(r1, 400);
    expect(r1.body.file_upload[0]).toMatch(/not been uploaded/);

    const foreign = await uploadFile(
      b.admin.token,
      "theirs.txt",
      "text/plain",
      new TextEncoder().encode("b"),
    );
    const r2 = await attach(a.admin.token, "documents", {
      account: a.account.url,
      task: task.url,
      file_upload: foreign.url,
    });
    expectStatus(r2, 400);
    expect(r2.body).toEqual({ file_upload: [NOT_EXIST] });

    const mine = await uploadFile(a.admin.token, "mine.txt", "text/plain", new TextEncoder().encode("a"));
    expectStatus(
      await attach(a.admin.token, "documents", {
        account: a.account.url,
        task: task.url,
        file_upload: mine.url,
      }),
      201,
    );
    const again = await attach(a.admin.token, "documents", {
      account: a.account.url,
      task: task.url,
      file_upload: mine.url,
    });
    expectStatus(again, 400);
    expect(again.body.file_upload[0]).toMatch(/already attached to a document/);
    const asSignature = await attach(a.admin.token, "signatures", {
      account: a.account.url,
      task: task.url,
      file_upload: mine.url,
    });
    expectStatus(asSignature, 400);
  });

  it("attaches an empty file (octet-stream, nothing to sniff)", async () => {
    const { admin, account } = await newAccount();
    const task = await insertTask(account.id);
    const fu = await uploadFile(admin.token, "empty.dat", "application/octet-stream", new Uint8Array(0));
    const d = await attach(admin.token, "documents", {
      account: account.url,
      task: task.url,
      file_upload: fu.url,
    });
    expectStatus(d, 201);
    expect(d.body.mimetype).toBe("application/octet-stream");
    const got = await fetchBytes(d.body.file, { Range: "bytes=0-" });
    expect([got.status, got.bytes.length]).toEqual([200, 0]);
    expect((await fetchBytes(d.body.file, {}, "POST")).status).toBe(405);
    expect((await fetchBytes("https://api.test/files/documents/nope/x.txt")).status).toBe(404);
  });

  it("answers field errors for another account, task or order, and required fields", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const theirTask = await insertTask(b.account.id);
    const fu = await uploadFile(a.admin.token, "x.txt", "text/plain", new TextEncoder().encode("x"));
    const r = await attach(a.admin.token, "documents", {
      account: b.account.url,
      task: theirTask.url,
      file_upload: fu.url,
      order: `https://api.test/orders/${uuidv7()}/`,
      s3_response_headers: { "X-Evil": "1" },
    });
    expectStatus(r, 400);
    expect(r.body.account).toEqual([NOT_EXIST]);
    expect(r.body.task).toEqual([NOT_EXIST]);
    expect(r.body.order).toEqual([NOT_EXIST]);
    expect(Object.keys(r.body.s3_response_headers)).toEqual(["X-Evil"]);
    const missing = await attach(a.admin.token, "documents", {});
    expectStatus(missing, 400);
    expect(missing.body.task).toEqual(["This field is required."]);
    expect(missing.body.file_upload).toEqual(["This field is required."]);
    const junk = await attach(a.admin.token, "documents", {
      account: "nope",
      task: "nope",
      file_upload: "nope",
    });
    expect(junk.body.task).toEqual(["Invalid hyperlink - No URL match."]);
  });
});

describe("documents: list, detail, PATCH, DELETE, batch_delete, visibility, events", () => {
  it("lists with task and order filters (strict query), patches, deletes with the stored files", async () => {
    const { admin, account } = await newAccount();
    const orderId = uuidv7();
    const now = Date.now();
    await stored
      .prepare("INSERT INTO orders (id, account_id, created_at, updated_at) VALUES (?, ?, ?, ?)")
      .bind(orderId, account.id, now, now)
      .run();
    const t1 = await insertTask(account.id);
    const t2 = await insertTask(account.id);
    const docs: any[] = [];
    for (const [task, order] of [
      [t1, orderId],
      [t1, null],
      [t2, null],
    ] as const) {
      const fu = await uploadFile(admin.token, "note.txt", "text/plain", new TextEncoder().encode("hello"));
      const body: Record<string, unknown> = { account: account.url, task: task.url, file_upload: fu.url };
      if (order) body.order = `https://api.test/orders/${order}/`;
      const d = await attach(admin.token, "documents", body);
      expectStatus(d, 201);
      docs.push(d.body);
    }
    expect(docs[0].mimetype).toBe("text/plain");
    const all = await call("/documents/", { token: admin.token });
    expect(all.body.results.map((x: any) => x.id)).toEqual(docs.map((d) => d.id));
    const byTask = await call(`/documents/?task=${encodeURIComponent(t1.url)}`, { token: admin.token });
    expect(byTask.body.results.map((x: any) => x.id)).toEqual([docs[0].id, docs[1].id]);
    const byOrder = await call(`/documents/?order=${orderId}`, { token: admin.token });
    expect(byOrder.body.results.map((x: any) => x.id)).toEqual([docs[0].id]);
    // Many tasks' documents in one request (django-filter's `__in`): URLs or ids, comma-separated.
    const t3 = await insertTask(account.id);
    const byTasks = await call(`/documents/?task__in=${encodeURIComponent(`${t1.url},${t2.id}`)}`, {
      token: admin.token,
    });
    expectStatus(byTasks, 200);
    expect(byTasks.body.results.map((x: any) => x.id)).toEqual(docs.map((d) => d.id));
    const ofOne = await call(`/documents/?task__in=${t2.id},${t3.id}`, { token: admin.token });
    expect(ofOne.body.results.map((x: any) => x.id)).toEqual([docs[2].id]);
    const both = await call(`/documents/?task__in=${t1.id},${t2.id}&order=${orderId}`, {
      token: admin.token,
    });
    expect(both.body.results.map((x: any) => x.id)).toEqual([docs[0].id]);
    const junkIn = await call(`/documents/?task__in=${t1.id},nope`, { token: admin.token });
    expectStatus(junkIn, 400);
    expect(junkIn.body).toEqual({ task__in: ["Invalid hyperlink - No URL match."] });
    const many = Array.from({ length: 101 }, () => uuidv7()).join(",");
    const tooMany = await call(`/documents/?task__in=${many}`, { token: admin.token });
    expectStatus(tooMany, 400);
    expect(tooMany.body.task__in[0]).toMatch(/at most 100/);
    const hundred = Array.from({ length: 99 }, () => uuidv7())
      .concat(t2.id)
      .join(",");
    const atLimit = await call(`/documents/?task__in=${hundred}`, { token: admin.token });
    expect(atLimit.body.results.map((x: any) => x.id)).toEqual([docs[2].id]);
    expectStatus(await call("/documents/?colour=red", { token: admin.token }), 400);
    expect((await call("/signatures/", { token: admin.token })).body.results).toEqual([]);
    expectStatus(await call(`/signatures/${docs[0].id}/`, { token: admin.token }), 404);

    const patched = await call(docs[0].url, {
      method: "PATCH",
      token: admin.token,
      body: { description: "updated", visible_to_client: true, file_name: "ignored.txt" },
    });
    expectStatus(patched, 200);
    expect([patched.body.description, patched.body.visible_to_client, patched.body.file_name]).toEqual([
      "updated",
      true,
      "note.txt",
    ]);

    const key = `documents/${docs[2].id}/note.txt`;
    expect(await env.FILES.head(key)).not.toBeNull();
    expectStatus(await call(docs[2].url, { method: "DELETE", token: admin.token }), 204);
    expectStatus(await call(docs[2].url, { token: admin.token }), 404);
    expect(await env.FILES.head(key)).toBeNull();
    expect((await fetchBytes(docs[2].file)).status).toBe(404);
  });

  it("batch_delete is all or nothing", async () => {
    const { admin, account } = await newAccount();
    const other = await newAccount();
    const task = await insertTask(account.id);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const fu = await uploadFile(admin.token, `s${i}.txt`, "text/plain", new TextEncoder().encode(`s${i}`));
      const d = await attach(admin.token, "signatures", {
        account: account.url,
        task: task.url,
        file_upload: fu.url,
      });
      expectStatus(d, 201);
      ids.push(d.body.id);
    }
    const otherTask = await insertTask(other.account.id);
    const ofu = await uploadFile(other.admin.token, "o.txt", "text/plain", new TextEncoder().encode("o"));
    const theirs = await attach(other.admin.token, "signatures", {
      account: other.account.url,
      task: otherTask.url,
      file_upload: ofu.url,
    });
    expectStatus(theirs, 201);

    const refused = await call("/signatures/batch_delete/", {
      token: admin.token,
      body: { ids: [ids[0], `https://api.test/signatures/${ids[1]}/`, theirs.body.id, uuidv7()] },
    });
    expectStatus(refused, 400);
    expect(refused.body).toEqual({ ids: { "2": [NOT_EXIST], "3": [NOT_EXIST] } });
    expect((await call("/signatures/", { token: admin.token })).body.results).toHaveLength(3);

    const done = await call("/signatures/batch_delete/", {
      token: admin.token,
      body: { ids: [ids[0], `https://api.test/signatures/${ids[1]}/`] },
    });
    expectStatus(done, 204);
    const left = await call("/signatures/", { token: admin.token });
    expect(left.body.results.map((x: any) => x.id)).toEqual([ids[2]]);
    expect(await env.FILES.head(`signatures/${ids[0]}/s0.txt`)).toBeNull();
    expectStatus(await call(theirs.body.url, { token: other.admin.token }), 200);
    expectStatus(await call("/signatures/batch_delete/", { token: admin.token, body: { ids: [] } }), 400);
    expectStatus(
      await call("/documents/batch_delete/", { token: admin.token, body: { ids: [ids[2]] } }),
      400,
    );
  });

  it("keeps a deleted task's documents: listed, served, then removed by batch_delete", async () => {
    const { admin, task, d } = await taskWithDocument("pod.txt", "signed");
    expectStatus(await call(task.url, { method: "DELETE", token: admin.token }), 204);
    expectStatus(await call(task.url, { token: admin.token }), 404);

    const kept = await call(d.body.url, { token: admin.token });
    expectStatus(kept, 200);
    expect(kept.body.task).toBe(task.url);
    expect((await call("/documents/", { token: admin.token })).body.results.map((x: any) => x.id)).toEqual([
      d.body.id,
    ]);
    expect((await fetchBytes(d.body.file)).status).toBe(200);

    expectStatus(
      await call("/documents/batch_delete/", { token: admin.token, body: { ids: [d.body.id] } }),
      204,
    );
    expectStatus(await call(d.body.url, { token: admin.token }), 404);
  });

  it("shows a worker only visible documents of its own tasks; it may change only its own", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const mine = await insertTask(acc.account.id, { state: "assigned", assigneeId: worker.userId });
    const notMine = await insertTask(acc.account.id);
    const mk = async (task: { url: string }, extra: Record<string, unknown> = {}) => {
      const fu = await uploadFile(acc.admin.token, "w.txt", "text/plain", new TextEncoder().encode("w"));
      const d = await attach(acc.admin.token, "documents", {
        account: acc.account.url,
        task: task.url,
        file_upload: fu.url,
        ...extra,
      });
      expectStatus(d, 201);
      return d.body;
    };
    const visible = await mk(mine);
    const hidden = await mk(mine, { visible_to_worker: false });
    const elsewhere = await mk(notMine);
    const list = await call("/documents/", { token: worker.token });
    expect(list.body.results.map((x: any) => x.id)).toEqual([visible.id]);
    // Naming another's task in a list filter shows nothing more.
    const named = await call(`/documents/?task__in=${mine.id},${notMine.id}`, { token: worker.token });
    expect(named.body.results.map((x: any) => x.id)).toEqual([visible.id]);
    expectStatus(await call(hidden.url, { token: worker.token }), 404);
    expectStatus(await call(elsewhere.url, { token: worker.token }), 404);
    expectStatus(await call(visible.url, { method: "DELETE", token: worker.token }), 403);

    // A worker attaches to its own task (e.g. a photo), not to another's.
    const wfu = await uploadFile(worker.token, "photo.txt", "text/plain", new TextEncoder().encode("p"));
    const denied = await attach(worker.token, "documents", {
      account: acc.account.url,
      task: notMine.url,
      file_upload: wfu.url,
    });
    expectStatus(denied, 400);
    expect(denied.body.task).toEqual([NOT_EXIST]);
    const own = await attach(worker.token, "documents", {
      account: acc.account.url,
      task: mine.url,
      file_upload: wfu.url,
    });
    expectStatus(own, 201);
    expectStatus(
      await call(own.body.url, { method: "PATCH", token: worker.token, body: { description: "d" } }),
      200,
    );
    expectStatus(await call(own.body.url, { method: "DELETE", token: worker.token }), 204);
  });

  it("records document.created / signature.deleted events with the task inline", async () => {
    const { admin, account, task, d } = await taskWithDocument("e.txt", "e");
    expectStatus(await call(d.body.url, { method: "DELETE", token: admin.token }), 204);
    const results = await storedEvents({ accountId: account.id, objectId: d.body.id });
    expect(results.map((e) => e.type)).toEqual(["document.created", "document.deleted"]);
    const payload = results[0].data;
    expect(payload.id).toBe(d.body.id);
    expect(payload.file).toBe(d.body.file);
    expect(payload.task.id).toBe(task.id);
    expect(payload.task.url).toBe(task.url);
    expect(payload.task.state).toBe("unassigned");
    expect(payload).not.toHaveProperty("s3_response_headers");
  });

  it("copies large uploads without holding them: 12 MiB attach and download", async () => {
    const { admin, account } = await newAccount();
    const task = await insertTask(account.id);
    const content = pseudoRandomBytes(12 * 1024 * 1024, 11);
    const fu = await uploadFile(admin.token, "big archive.bin", "application/octet-stream", content);
    const d = await attach(admin.token, "documents", {
      account: account.url,
      task: task.url,
      file_upload: fu.url,
    });
    expectStatus(d, 201);
    expect(d.body.mimetype).toBe("application/octet-stream");
    const got = await fetchBytes(d.body.file);
    expect(bytesEqual(got.bytes, content)).toBe(true);
  });
});
