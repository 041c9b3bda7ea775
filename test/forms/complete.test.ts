import { describe, expect, it } from "vitest";
import { unpackJson } from "../../src/formats/packed-json";
import { dispatchPendingEvents } from "../../src/services/events/dispatch";
import { insertTask } from "../factories";
import { addUser, call, expectStatus, newAccount } from "../helpers";
import { stored } from "../stored";
import { createHook, envWith, fakeQueue } from "../webhooks/support";
import { inspectionForm, newField, respond } from "./helpers";

const COMPLETED = { non_field_errors: ["Form response is completed."] };

async function draft() {
  const acc = await newAccount();
  const worker = await addUser(acc, "worker");
  const form = await inspectionForm(acc);
  await newField(acc, form, { key: "signed_off", field_type: "boolean", required: true, position: 4 });
  const task = await insertTask(acc.account.id, { state: "active", assigneeId: worker.userId });
  const r = await respond(worker.token, { form: form.url, task: task.url });
  expectStatus(r, 201);
  return { acc, worker, form, task, response: r.body };
}

const complete = (token: string, id: string) =>
  call(`/form_responses/${id}/complete/`, { method: "POST", token });

describe("completing a form response (contract §15)", () => {
  it("checks required fields, naming the missing keys, and changes nothing", async () => {
    const { worker, response } = await draft();
    await call(`/form_responses/${response.id}/`, {
      method: "PATCH",
      token: worker.token,
      body: { data: { condition: null } },
    });
    const r = await complete(worker.token, response.id);
    expectStatus(r, 400);
    expect(r.body).toEqual({
      data: { condition: ["This field is required."], signed_off: ["This field is required."] },
    });
    const after = await call(`/form_responses/${response.id}/`, { token: worker.token });
    expect(after.body.state).toBe("draft");
    expect(after.body.completed_at).toBeNull();
  });

  it("sets state, completed_at, completed_by and the snapshot; afterwards the response is read-only", async () => {
    const { acc, worker, form, response } = await draft();
    await call(`/form_responses/${response.id}/`, {
      method: "PATCH",
      token: worker.token,
      body: { data: { condition: "damaged", signed_off: true } },
    });
    const r = await complete(worker.token, response.id);
    expectStatus(r, 200);
    expect(r.body).toMatchObject({ state: "completed", completed_by: worker.user });
    expect(r.body.completed_at).toEqual(expect.any(String));
    // The worker's view of the snapshot leaves out the field hidden from workers.
    expect(r.body.schema_snapshot.form).toMatchObject({ id: form.id, name: "Inspection" });
    expect(r.body.schema_snapshot.fields.map((f: any) => f.key)).toEqual([
      "condition",
      "count",
      "signed_off",
    ]);
    const full = await call(`/form_responses/${response.id}/`, { token: acc.admin.token });
    expect(full.body.schema_snapshot.fields.map((f: any) => f.key)).toEqual([
      "condition",
      "count",
      "internal",
      "signed_off",
    ]);
    for (const [method, body] of [
      ["PATCH", { data: { count: 1 } }],
      ["PUT", { data: {} }],
      ["DELETE", undefined],
    ] as const) {
      const w = await call(`/form_responses/${response.id}/`, { method, token: acc.admin.token, body });
      expectStatus(w, 400);
      expect(w.body).toEqual(COMPLETED);
    }
    const again = await complete(acc.admin.token, response.id);
    expectStatus(again, 400);
    expect(again.body).toEqual(COMPLETED);
  });

  it("of two racing completes exactly one succeeds, with one event", async () => {
    for (let round = 0; round < 3; round++) {
      const { acc, worker, response } = await draft();
      await call(`/form_responses/${response.id}/`, {
        method: "PATCH",
        token: worker.token,
        body: { data: { condition: "ok", signed_off: true } },
      });
      const replies = await Promise.all([
        complete(worker.token, response.id),
        complete(acc.admin.token, response.id),
      ]);
      expect(replies.map((r) => r.status).sort()).toEqual([200, 400]);
      const { n } = (await stored
        .prepare(
          "SELECT COUNT(*) AS n FROM events WHERE account_id = unhex(?, '-') AND type = 'form_response.completed'",
        )
        .bind(acc.account.id)
        .first<{ n: number }>())!;
      expect(n).toBe(1);
    }
  });

  it("a racing edit cannot slip an empty required value past the check", async () => {
    for (let round = 0; round < 3; round++) {
      const { worker, response } = await draft();
      const path = `/form_responses/${response.id}/`;
      await call(path, {
        method: "PATCH",
        token: worker.token,
        body: { data: { condition: "ok", signed_off: true } },
      });
      await Promise.all([
        complete(worker.token, response.id),
        call(path, {
          method: "PATCH",
          token: worker.token,
          body: { data: { condition: "", signed_off: true } },
        }),
      ]);
      const final = await call(path, { token: worker.token });
      if (final.body.state === "completed") expect(final.body.data.condition).toBe("ok");
      else expect(final.body.data.condition).toBeNull();
    }
  });

  it("the snapshot never changes: fields edited, deleted, the form deleted", async () => {
    const { acc, worker, form, response } = await draft();
    await call(`/form_responses/${response.id}/`, {
      method: "PATCH",
      token: worker.token,
      body: { data: { condition: "ok", signed_off: true, count: 2 } },
    });
    const done = await complete(worker.token, response.id);
    expectStatus(done, 200);
    const before = await call(`/form_responses/${response.id}/`, { token: acc.admin.token });
    const fields = await call(`/form_fields/?form=${form.id}`, { token: acc.admin.token });
    const count = fields.body.results.find((f: any) => f.key === "count");
    const condition = fields.body.results.find((f: any) => f.key === "condition");
    await call(`/form_fields/${count.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { label: "Parcels", required: true },
    });
    await call(`/form_fields/${condition.id}/`, { method: "DELETE", token: acc.admin.token });
    await call(`/forms/${form.id}/`, { method: "PATCH", token: acc.admin.token, body: { name: "Renamed" } });
    const mid = await call(`/form_responses/${response.id}/`, { token: acc.admin.token });
    expect(mid.body).toEqual(before.body);
    expectStatus(await call(`/forms/${form.id}/`, { method: "DELETE", token: acc.admin.token }), 204);
    const after = await call(`/form_responses/${response.id}/`, { token: acc.admin.token });
    expectStatus(after, 200);
    expect(after.body).toEqual(before.body);
    expect(after.body.schema_snapshot.form.name).toBe("Inspection");
  });

  it("form_response.completed reaches only webhooks with form_response_events, with the snapshot and the task", async () => {
    const { acc, worker, response, task } = await draft();
    const flagged = await createHook(acc, { form_response_events: true });
    // The flag decides, whatever the list says (contract §15).
    const flaggedOtherList = await createHook(acc, { form_response_events: true, events: ["task.created"] });
    const listing = await createHook(acc, { events: ["form_response.completed"] });
    const everything = await createHook(acc);
    await call(`/form_responses/${response.id}/`, {
      method: "PATCH",
      token: worker.token,
      body: { data: { condition: "ok", signed_off: true } },
    });
    expectStatus(await complete(worker.token, response.id), 200);
    await dispatchPendingEvents(envWith({ WEBHOOKS_QUEUE: fakeQueue().queue }));
    const delivered = async (hookId: string) =>
      (
        await stored
          .prepare(
            "SELECT e.type, e.payload FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.webhook_id = unhex(?, '-') AND e.type = 'form_response.completed'",
          )
          .bind(hookId)
          .all<{ type: string; payload: string }>()
      ).results;
    const got = await delivered(flagged.id);
    expect(got).toHaveLength(1);
    const data = unpackJson<any>(got[0].payload);
    expect(data.id).toBe(response.id);
    expect(data.state).toBe("completed");
    expect(data.schema_snapshot.fields.length).toBe(4);
    expect(data.task.id).toBe(task.id);
    expect(await delivered(flaggedOtherList.id)).toHaveLength(1);
    expect(await delivered(listing.id)).toEqual([]);
    expect(await delivered(everything.id)).toEqual([]);
  });
});
