import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { insertTask } from "../factories";
import { uploadFile } from "../files/helpers";
import { addUser, BASE, call, expectStatus, newAccount } from "../helpers";
import { expectDataErrors, inspectionForm, newField, newForm, respond } from "./helpers";

describe("forms and fields (contract §15)", () => {
  it("creates forms and fields of every type, listed by position, with their defaults", async () => {
    const acc = await newAccount();
    const form = await newForm(acc);
    expect(form).toMatchObject({
      name: "Checklist",
      description: "",
      is_active: true,
      account: acc.account.url,
    });
    const types = [
      "text",
      "textarea",
      "number",
      "boolean",
      "date",
      "time",
      "datetime",
      "select",
      "multiselect",
      "photo",
      "signature",
      "section",
    ];
    for (const [i, field_type] of types.entries()) {
      const body: Record<string, unknown> = {
        key: `f_${field_type}`,
        field_type,
        position: types.length - i,
      };
      if (field_type.includes("select")) body.choices = ["a", "b"];
      const f = await newField(acc, form, body);
      expect(f).toMatchObject({
        required: false,
        visible_to_worker: true,
        collapsed: false,
        layout: "list",
        default: null,
      });
    }
    const list = await call(`/form_fields/?form=${form.id}&page_size=100`, { token: acc.admin.token });
    expectStatus(list, 200);
    expect(list.body.results.map((f: any) => f.field_type)).toEqual([...types].reverse());
    // Without a position, a field goes after the last.
    const last = await newField(acc, form, { key: "tail", field_type: "text" });
    expect(last.position).toBe(types.length + 1);
    const section = await newField(acc, form, {
      key: "sec",
      field_type: "section",
      collapsed: true,
      layout: "table",
    });
    expect(section).toMatchObject({ collapsed: true, layout: "table" });
  });

  it("refuses bad fields with field errors and stores nothing", async () => {
    const acc = await newAccount();
    const form = await newForm(acc);
    await newField(acc, form, { key: "taken", field_type: "text" });
    const other = await newAccount();
    const otherForm = await newForm(other);
    const cases: [Record<string, unknown>, string][] = [
      [{ key: "Bad Key", field_type: "text" }, "key"],
      [{ key: "taken", field_type: "number" }, "key"],
      [{ key: "s", field_type: "select" }, "choices"],
      [{ key: "s", field_type: "multiselect", choices: [] }, "choices"],
      [{ key: "n", field_type: "number", default: "five" }, "default"],
      [{ key: "s", field_type: "select", choices: ["a"], default: "b" }, "default"],
      [{ key: "p", field_type: "photo", default: `${BASE}/documents/${crypto.randomUUID()}/` }, "default"],
      [{ key: "x", field_type: "hologram" }, "field_type"],
      [{ key: "x", field_type: "text", form: otherForm.url }, "form"],
    ];
    for (const [body, field] of cases) {
      const r = await call("/form_fields/", { token: acc.admin.token, body: { form: form.url, ...body } });
      expectStatus(r, 400);
      expect(Object.keys(r.body), JSON.stringify(body)).toContain(field);
    }
    const list = await call(`/form_fields/?form=${form.id}`, { token: acc.admin.token });
    expect(list.body.results.map((f: any) => f.key)).toEqual(["taken"]);
  });

  it("holds at most MAX_FORM_FIELDS fields per form", async () => {
    const acc = await newAccount();
    const form = await newForm(acc);
    const app = createApp();
    const limited = { ...env, MAX_FORM_FIELDS: "3" };
    const add = (key: string) =>
      app.fetch(
        new Request(`${BASE}/form_fields/`, {
          method: "POST",
          headers: { Authorization: `Bearer ${acc.admin.token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ form: form.url, key, field_type: "text" }),
        }),
        limited,
      );
    const replies = await Promise.all(["a", "b", "c", "d", "e"].map(add));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(3);
    const refused = replies.filter((r) => r.status === 400);
    expect(refused).toHaveLength(2);
    expect(await refused[0].json()).toEqual({ form: ["A form has at most 3 fields."] });
  });

  it("workers read forms but do not design them; other accounts' forms are 404", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const form = await newForm(acc);
    expectStatus(await call(`/forms/${form.id}/`, { token: worker.token }), 200);
    expectStatus(await call("/forms/", { token: worker.token, body: { name: "x" } }), 403);
    expectStatus(
      await call("/form_fields/", {
        token: worker.token,
        body: { form: form.url, key: "k", field_type: "text" },
      }),
      403,
    );
    const other = await newAccount();
    expectStatus(await call(`/forms/${form.id}/`, { token: other.admin.token }), 404);
    expectStatus(
      await call(`/forms/${form.id}/`, { method: "PATCH", token: other.admin.token, body: { name: "y" } }),
      404,
    );
    expectStatus(await call(`/forms/${form.id}/`, { method: "DELETE", token: other.admin.token }), 404);
  });
});

describe("form responses", () => {
  it("start from the form's defaults, overridden by the task's form_default_values, then by data", async () => {
    const acc = await newAccount();
    const form = await inspectionForm(acc);
    const task = await call("/tasks/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        category: "drop_off",
        address: { raw_address: "Tallinn" },
        form_default_values: { [form.id]: { count: 3, condition: "not-a-choice" } },
      },
    });
    expectStatus(task, 201);
    const r = await respond(acc.admin.token, {
      form: form.url,
      task: task.body.url,
      data: { internal: "note" },
    });
    expectStatus(r, 201);
    expect(r.body).toMatchObject({
      state: "draft",
      task: task.body.url,
      form: form.url,
      completed_at: null,
      completed_by: null,
      schema_snapshot: null,
      created_by: acc.admin.user,
    });
    // The invalid override is skipped; the field's default stays.
    expect(r.body.data).toEqual({ condition: "ok", count: 3, internal: "note" });
  });

  it("validates data on every write: unknown keys, types, choices, photos of another task", async () => {
    const acc = await newAccount();
    const form = await inspectionForm(acc);
    await newField(acc, form, { key: "photo", field_type: "photo" });
    const task = await insertTask(acc.account.id);
    const otherTask = await insertTask(acc.account.id);
    const fu = await uploadFile(acc.admin.token, "a.txt", "text/plain", new TextEncoder().encode("x"));
    const doc = await call("/documents/", {
      token: acc.admin.token,
      body: { account: acc.account.url, task: otherTask.url, file_upload: fu.url },
    });
    expectStatus(doc, 201);
    const r = await respond(acc.admin.token, {
      form: form.url,
      task: task.url,
      data: { nope: 1, count: "three", condition: "broken", photo: doc.body.url },
    });
    expectDataErrors(r, ["nope", "count", "condition", "photo"]);
    expect(r.body.data.nope).toEqual(["Unknown field."]);
    expect(r.body.data.photo).toEqual(["Expected a document of this response's task."]);
    const list = await call(`/form_responses/?form=${form.id}`, { token: acc.admin.token });
    expect(list.body.results).toEqual([]);

    const ok = await respond(acc.admin.token, {
      form: form.url,
      task: otherTask.url,
      data: { photo: doc.body.url },
    });
    expectStatus(ok, 201);
    const bad = await call(`/form_responses/${ok.body.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { data: { count: true } },
    });
    expectDataErrors(bad, ["count"]);
    const after = await call(`/form_responses/${ok.body.id}/`, { token: acc.admin.token });
    expect(after.body.data.photo).toBe(doc.body.url);
  });

  it("refuses data over the JSON field limit, and stores nothing", async () => {
    const acc = await newAccount();
    const form = await inspectionForm(acc);
    await newField(acc, form, { key: "notes", field_type: "textarea" });
    const r = await respond(acc.admin.token, { form: form.url, data: { notes: "x".repeat(70 * 1024) } });
    expectStatus(r, 400);
    expect(Object.keys(r.body)).toEqual(["data"]);
    const list = await call(`/form_responses/?form=${form.id}`, { token: acc.admin.token });
    expect(list.body.results).toEqual([]);
  });

  it("refuses fields of another form, other accounts' forms and tasks, inactive forms", async () => {
    const acc = await newAccount();
    const form = await inspectionForm(acc);
    const second = await newForm(acc, "Second");
    await newField(acc, second, { key: "only_here", field_type: "text" });
    expectDataErrors(await respond(acc.admin.token, { form: form.url, data: { only_here: "x" } }), [
      "only_here",
    ]);
    const other = await newAccount();
    const otherForm = await newForm(other);
    const otherTask = await insertTask(other.account.id);
    const r = await respond(acc.admin.token, { form: otherForm.url, task: otherTask.url });
    expectStatus(r, 400);
    expect(r.body).toEqual({
      form: ["Invalid hyperlink - Object does not exist."],
      task: ["Invalid hyperlink - Object does not exist."],
    });
    await call(`/forms/${second.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { is_active: false },
    });
    const inactive = await respond(acc.admin.token, { form: second.url });
    expectStatus(inactive, 400);
    expect(inactive.body.form).toEqual(["This form is not active."]);
  });

  it("workers: their tasks' responses only, without hidden fields, which they cannot write but keep", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const form = await inspectionForm(acc);
    const mine = await insertTask(acc.account.id, { state: "assigned", assigneeId: worker.userId });
    const notMine = await insertTask(acc.account.id);
    const byAdmin = await respond(acc.admin.token, {
      form: form.url,
      task: mine.url,
      data: { internal: "secret note" },
    });
    expectStatus(byAdmin, 201);
    const seen = await call(`/form_responses/${byAdmin.body.id}/`, { token: worker.token });
    expectStatus(seen, 200);
    expect(seen.body.data).toEqual({ condition: "ok" });
    expectDataErrors(
      await respond(worker.token, { form: form.url, task: mine.url, data: { internal: "x" } }),
      ["internal"],
    );
    const elsewhere = await respond(worker.token, { form: form.url, task: notMine.url });
    expectStatus(elsewhere, 400);
    expect(elsewhere.body.task).toEqual(["Invalid hyperlink - Object does not exist."]);
    const other = await respond(acc.admin.token, { form: form.url, task: notMine.url });
    expectStatus(await call(`/form_responses/${other.body.id}/`, { token: worker.token }), 404);
    const list = await call("/form_responses/", { token: worker.token });
    expect(list.body.results.map((x: any) => x.id)).toEqual([byAdmin.body.id]);
    // Several tasks' responses in one request (`task__in`): a worker's still its own only.
    const both = `task__in=${encodeURIComponent(`${mine.url},${notMine.id}`)}`;
    const named = await call(`/form_responses/?${both}`, { token: worker.token });
    expect(named.body.results.map((x: any) => x.id)).toEqual([byAdmin.body.id]);
    const all = await call(`/form_responses/?${both}`, { token: acc.admin.token });
    expect(all.body.results.map((x: any) => x.id)).toEqual([byAdmin.body.id, other.body.id]);
    const onlyOther = await call(`/form_responses/?task__in=${notMine.id}&form=${form.id}`, {
      token: acc.admin.token,
    });
    expect(onlyOther.body.results.map((x: any) => x.id)).toEqual([other.body.id]);
    const junk = await call("/form_responses/?task__in=nope", { token: acc.admin.token });
    expectStatus(junk, 400);
    expect(junk.body).toEqual({ task__in: ["Invalid hyperlink - No URL match."] });
    // A worker's PUT replaces what it sees and keeps the hidden value.
    const put = await call(`/form_responses/${byAdmin.body.id}/`, {
      method: "PUT",
      token: worker.token,
      body: { data: { condition: "damaged" } },
    });
    expectStatus(put, 200);
    const full = await call(`/form_responses/${byAdmin.body.id}/`, { token: acc.admin.token });
    expect(full.body.data).toEqual({ condition: "damaged", internal: "secret note" });
  });
});
