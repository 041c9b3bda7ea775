import { describe, expect, it } from "vitest";
import { call, expectStatus, newAccount } from "../helpers";
import { createTask } from "../tasks/helpers";

let n = 0;
const ext = () => `ia-${Date.now()}-${n++}-${crypto.randomUUID().slice(0, 6)}`;
const now = () => new Date().toISOString();

describe("task commands: answers the interface spells out", () => {
  it("names the fields of a single invalid command, as for an item of a batch", async () => {
    const acc = await newAccount();
    const task = await createTask(acc);
    const missing = await call("/task_commands/", {
      token: acc.admin.token,
      body: { task: task.url, time: now(), action: "accept" },
    });
    expectStatus(missing, 400);
    expect(missing.body).toEqual({ external_id: ["This field is required."] });

    const wrongType = await call("/task_commands/", {
      token: acc.admin.token,
      body: { task: task.url, external_id: 42, time: now(), action: "accept" },
    });
    expectStatus(wrongType, 400);
    expect(Object.keys(wrongType.body)).toEqual(["external_id"]);

    const unknownAction = await call("/task_commands/", {
      token: acc.admin.token,
      body: { task: task.url, external_id: ext(), time: now(), action: "teleport" },
    });
    expectStatus(unknownAction, 400);
    expect(unknownAction.body.action[0]).toMatch(/^"teleport" is not a valid choice/);
    expect(unknownAction.body.non_field_errors).toBeUndefined();

    // The same mistake in a batch is named on its item.
    const batch = await call("/task_commands/", {
      token: acc.admin.token,
      body: [{ task: task.url, time: now(), action: "accept" }],
    });
    expectStatus(batch, 400);
    expect(batch.body).toEqual([{ external_id: ["This field is required."] }]);
  });

  it("updates the contact address's address, and the task's, with an update command", async () => {
    const acc = await newAccount();
    const ca = await call("/contact_addresses/", {
      token: acc.admin.token,
      body: { address: { raw_address: "Tallinn" }, contact: { name: "Mari" } },
    });
    expectStatus(ca, 201);
    const task = await createTask(acc, {
      address: undefined,
      contact: undefined,
      contact_address: ca.body.url,
    });
    const r = await call("/task_commands/", {
      token: acc.admin.token,
      body: {
        task: task.url,
        external_id: ext(),
        time: now(),
        action: "update",
        task_data: { contact_address: { address: { raw_address: "Jyväskylä" } } },
      },
    });
    expectStatus(r, 201);
    expect(r.body.state).toBe("accepted");
    const after = await call(`/tasks/${task.id}/`, { token: acc.admin.token });
    expect(after.body.address.raw_address).toBe("Jyväskylä");
    const contact = await call(`/contact_addresses/${ca.body.id}/`, { token: acc.admin.token });
    expect(contact.body.address.raw_address).toBe("Jyväskylä");
  });

  it("changes the task's address when the task has no contact address", async () => {
    const acc = await newAccount();
    const task = await createTask(acc);
    const r = await call("/task_commands/", {
      token: acc.admin.token,
      body: {
        task: task.url,
        external_id: ext(),
        time: now(),
        action: "update",
        task_data: { contact_address: { address: { raw_address: "Jyväskylä" } } },
      },
    });
    expectStatus(r, 201);
    const after = await call(`/tasks/${task.id}/`, { token: acc.admin.token });
    expect(after.body.address.raw_address).toBe("Jyväskylä");
  });

  it("answers malformed JSON with DRF's parse_error", async () => {
    const acc = await newAccount();
    const r = await call("/tasks/", {
      token: acc.admin.token,
      raw: '{"account": ',
      headers: { "Content-Type": "application/json" },
      method: "POST",
    });
    expectStatus(r, 400);
    expect(r.body.code).toBe("parse_error");
  });
});
