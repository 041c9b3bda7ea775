import { exports } from "cloudflare:workers";
import { PDFDocument } from "@cantoo/pdf-lib";
import { describe, expect, it } from "vitest";
import { insertTask } from "../factories";
import { eventually, jpegBytes, pngBytes, uploadFile } from "../files/helpers";
import { call, expectStatus, newAccount, type TestAccount } from "../helpers";
import { pdfPages, pdfText } from "../pdf";

async function finishedTask(acc: TestAccount) {
  const task = await insertTask(acc.account.id, { state: "active", assigneeId: acc.admin.userId });
  const photo = await uploadFile(acc.admin.token, "parcel.png", "image/png", await pngBytes(640, 480));
  const doc = await call("/documents/", {
    token: acc.admin.token,
    body: {
      account: acc.account.url,
      task: task.url,
      file_upload: photo.url,
      description: "Parcel at the door",
    },
  });
  expectStatus(doc, 201);
  const sig = await uploadFile(acc.admin.token, "sig.jpg", "image/jpeg", await jpegBytes(300, 100));
  await call(`/accounts/${acc.account.id}/`, {
    method: "PATCH",
    token: acc.admin.token,
    body: { feature_signer_name: true },
  });
  const s = await call("/signatures/", {
    token: acc.admin.token,
    body: { account: acc.account.url, task: task.url, file_upload: sig.url, signer_name: "Aino Virtanen" },
  });
  expectStatus(s, 201);
  // The thumbnail is made from the queue; the POD embeds it once there.
  await eventually(
    async () => (await call(`/documents/${doc.body.id}/`, { token: acc.admin.token })).body.thumbnail,
  );
  const done = await call("/task_commands/", {
    token: acc.admin.token,
    body: {
      task: task.url,
      external_id: `pod-${crypto.randomUUID()}`,
      time: new Date().toISOString(),
      action: "complete",
      notes: "Left with the neighbour",
      location: { type: "Point", coordinates: [24.75, 59.44] },
    },
  });
  expect(done.body.state).toBe("accepted");
  return task;
}

const pod = (acc: TestAccount, id: string, query = "", headers: Record<string, string> = {}) =>
  exports.default.fetch(
    new Request(`https://api.test/tasks/${id}/pod/${query}`, {
      headers: { Authorization: `Bearer ${acc.admin.token}`, ...headers },
    }),
  );

describe("GET /tasks/{id}/pod/ (contract §19)", () => {
  it("renders HTML with the completion, photos, signatures with signer names and history; options hide parts", async () => {
    const acc = await newAccount();
    const task = await finishedTask(acc);
    const res = await pod(acc, task.id);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/html/);
    const html = await res.text();
    for (const part of [
      "Completed",
      "Left with the neighbour",
      "59.44000, 24.75000",
      "Photos",
      "Signed by Aino Virtanen",
      "History",
      "<td>Completed</td>",
    ]) {
      expect(html, part).toContain(part);
    }
    expect(html).toMatch(/<img src="https:\/\/api\.test\/files\/[^"]+"/);
    const hidden = await (
      await pod(acc, task.id, "?pod_show_images=false&pod_show_task_events=false")
    ).text();
    expect(hidden).not.toContain("Photos");
    expect(hidden).not.toContain("History");
    expect(hidden).toContain("Signed by Aino Virtanen");
    // The account's options apply when the query says nothing.
    await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { pod_show_signatures: false },
    });
    expect(await (await pod(acc, task.id)).text()).not.toContain("Signatures");
  });

  it("renders a PDF that parses back, with its text and the images embedded", async () => {
    const acc = await newAccount();
    const task = await finishedTask(acc);
    for (const [query, headers] of [
      ["?format=pdf", {}],
      ["", { Accept: "application/pdf" }],
    ] as const) {
      const res = await pod(acc, task.id, query, headers);
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Type")).toBe("application/pdf");
      const bytes = new Uint8Array(await res.arrayBuffer());
      const doc = await PDFDocument.load(bytes);
      expect(doc.getPageCount()).toBe(1);
      const [page] = await pdfPages(bytes);
      expect(page.text).toContain("Signed by Aino Virtanen");
      expect(page.text).toMatch(/Status\nCompleted\n/);
      expect(page.text).toContain("Left with the neighbour");
      // Two images (the photo's thumbnail and the signature) are XObjects of the page.
      const raw = await pdfText(bytes);
      expect((raw.match(/\/Subtype \/Image/g) ?? []).length).toBe(2);
    }
  });

  it("is 400 for a task that is not finished, 404 for another account's", async () => {
    const acc = await newAccount();
    const open = await insertTask(acc.account.id);
    const r = await call(`/tasks/${open.id}/pod/`, { token: acc.admin.token });
    expectStatus(r, 400);
    expect(r.body.non_field_errors[0]).toMatch(/completed or failed/);
    const other = await newAccount();
    expectStatus(await call(`/tasks/${open.id}/pod/`, { token: other.admin.token }), 404);
    expectStatus(await call(`/tasks/${open.id}/pod/?pod_show_images=maybe`, { token: acc.admin.token }), 400);
  });
});
