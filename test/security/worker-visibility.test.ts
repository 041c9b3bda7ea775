import { describe, expect, it } from "vitest";
import { pngBytes, uploadFile } from "../files/helpers";
import { inspectionForm } from "../forms/helpers";
import { addUser, call, expectStatus, newAccount } from "../helpers";
import { sampleTask } from "../tasks/helpers";

const command = (token: string, task: string, action: string) =>
  call("/task_commands/", {
    token,
    body: { task, external_id: `v-${crypto.randomUUID()}`, time: new Date().toISOString(), action },
  });

describe("workers see what the worker may see, nothing else", () => {
  it("a worker's proof of delivery leaves out documents hidden from workers, and their file URLs", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const task = await call("/tasks/", {
      token: acc.admin.token,
      body: sampleTask(acc, { assignee: worker.user }),
    });
    const ids: Record<string, string> = {};
    for (const [name, visible] of [
      ["door.png", true],
      ["damage-claim.png", false],
    ] as const) {
      const fu = await uploadFile(acc.admin.token, name, "image/png", await pngBytes(40, 30));
      const doc = await call("/documents/", {
        token: acc.admin.token,
        body: {
          account: acc.account.url,
          task: task.body.url,
          file_upload: fu.url,
          visible_to_worker: visible,
        },
      });
      expectStatus(doc, 201);
      ids[name] = doc.body.id;
    }
    // A signature hidden from workers, too (the POD's signatures follow the same rule).
    const sigUpload = await uploadFile(
      acc.admin.token,
      "hidden-sig.png",
      "image/png",
      await pngBytes(30, 10),
    );
    const sig = await call("/signatures/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        task: task.body.url,
        file_upload: sigUpload.url,
        visible_to_worker: false,
      },
    });
    expectStatus(sig, 201);
    ids["hidden-sig.png"] = sig.body.id;
    expectStatus(await call(`/signatures/${sig.body.id}/`, { token: worker.token }), 404);
    for (const action of ["transit", "complete"]) await command(worker.token, task.body.url, action);
    const asWorker = await call(`/tasks/${task.body.id}/pod/`, { token: worker.token });
    const asAdmin = await call(`/tasks/${task.body.id}/pod/`, { token: acc.admin.token });
    expect(asAdmin.text).toContain(ids["damage-claim.png"]);
    expect(asAdmin.text).toContain(ids["door.png"]);
    expect(asWorker.text).toContain(ids["door.png"]);
    expect(asWorker.text).not.toContain(ids["damage-claim.png"]);
    expect(asAdmin.text).toContain(ids["hidden-sig.png"]);
    expect(asWorker.text).not.toContain(ids["hidden-sig.png"]);
  });

  it("hidden form fields: no definition in /form_fields/, no default in the task's form_default_values", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const form = await inspectionForm(acc);
    const task = await call("/tasks/", {
      token: acc.admin.token,
      body: sampleTask(acc, {
        assignee: worker.user,
        form_default_values: { [form.id]: { count: 3, internal: "customer owes 40 €" } },
      }),
    });
    expectStatus(task, 201);
    const fields = await call(`/form_fields/?form=${form.url}`, { token: worker.token });
    expectStatus(fields, 200);
    expect(fields.body.results.map((f: any) => f.key)).toEqual(["condition", "count"]);
    const all = await call(`/form_fields/?form=${form.url}`, { token: acc.admin.token });
    const hidden = all.body.results.find((f: any) => f.key === "internal");
    expectStatus(await call(`/form_fields/${hidden.id}/`, { token: worker.token }), 404);
    expectStatus(await call(`/form_fields/${hidden.id}/`, { token: acc.admin.token }), 200);

    const one = await call(`/tasks/${task.body.id}/`, { token: worker.token });
    expect(one.body.form_default_values).toEqual({ [form.id]: { count: 3 } });
    const list = await call("/tasks/", { token: worker.token });
    expect(list.body.results.find((t: any) => t.id === task.body.id).form_default_values).toEqual({
      [form.id]: { count: 3 },
    });
    expect(JSON.stringify(list.body)).not.toContain("owes");
    const admin = await call(`/tasks/${task.body.id}/`, { token: acc.admin.token });
    expect(admin.body.form_default_values[form.id].internal).toBe("customer owes 40 €");
    // The worker's response starts from the visible defaults only, and keeps the hidden one.
    const response = await call("/form_responses/", {
      token: worker.token,
      body: { form: form.url, task: task.body.url },
    });
    expectStatus(response, 201);
    expect(JSON.stringify(response.body)).not.toContain("owes");
  });
});
