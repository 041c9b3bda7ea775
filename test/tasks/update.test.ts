import { describe, expect, it } from "vitest";
import { addUser, defineMetafields, expectStatus, newAccount, storedEvents } from "../helpers";
import { stored } from "../stored";
import { api, createTask, sampleTask } from "./helpers";

const version = async (id: string) =>
  (await stored.prepare("SELECT version FROM tasks WHERE id = ?").bind(id).first<{ version: number }>())!
    .version;

const eventTypes = async (id: string) => (await storedEvents({ objectId: id })).map((e) => e.type);

describe("PATCH /tasks/{id}/ (interface §4.5)", () => {
  it("changes the fields sent, keeps the others, and records task.updated", async () => {
    const acc = await newAccount();
    await defineMetafields(acc, "tasks", { a: "integer" });
    const t = await createTask(acc);
    const r = await api(t.url, {
      method: "PATCH",
      token: acc.admin.token,
      body: { description: "Ring twice", complete_before: "2030-06-01T18:00:00Z", metafields: { a: 1 } },
    });
    expectStatus(r, 200);
    expect(r.body).toMatchObject({
      description: "Ring twice",
      complete_before: "2030-06-01T18:00:00.000Z",
      complete_after: t.complete_after,
      metafields: { a: 1 },
      address: t.address,
      contact: t.contact,
      state: "unassigned",
    });
    expect(r.body.updated_at >= t.updated_at).toBe(true);
    expect(await version(t.id)).toBe(2);
    expect(await eventTypes(t.id)).toEqual(["task.created", "task.updated"]);
    expect((await api(t.url, { token: acc.admin.token })).body).toEqual(r.body);
  });

  it("answers 400 pointing to task commands for `state`, and for a different assignee", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const t = await createTask(acc, { assignee: worker.user });
    const state = await api(t.url, { method: "PATCH", token: acc.admin.token, body: { state: "completed" } });
    expectStatus(state, 400);
    expect(state.body).toEqual({
      state: ["State changes are made with task commands: POST /task_commands/."],
    });
    const other = await addUser(acc, "worker");
    const assignee = await api(t.url, {
      method: "PATCH",
      token: acc.admin.token,
      body: { assignee: other.user },
    });
    expectStatus(assignee, 400);
    expect(assignee.body).toEqual({
      assignee: ["Assignment changes are made with task commands: POST /task_commands/."],
    });
    const same = await api(t.url, {
      method: "PATCH",
      token: acc.admin.token,
      body: { assignee: worker.user },
    });
    expectStatus(same, 200);
    expect(await version(t.id)).toBe(2);
  });

  it("re-geocodes a new address and keeps the geocoding of the same address sent again", async () => {
    const acc = await newAccount();
    const t = await createTask(acc);
    const same = await api(t.url, { method: "PATCH", token: acc.admin.token, body: { address: t.address } });
    expectStatus(same, 200);
    expect(same.body.address).toEqual(t.address);
    const moved = await api(t.url, {
      method: "PATCH",
      token: acc.admin.token,
      body: { address: { raw_address: "Narva, Estonia" } },
    });
    expectStatus(moved, 200);
    expect(moved.body.address.formatted_address).toMatch(/Narva/);
    expect(moved.body.address.geocoded_at >= t.address.geocoded_at).toBe(true);
  });

  it("checks the completion window against the stored values", async () => {
    const acc = await newAccount();
    const t = await createTask(acc);
    const r = await api(t.url, {
      method: "PATCH",
      token: acc.admin.token,
      body: { complete_before: "2030-05-01T00:00:00Z" },
    });
    expectStatus(r, 400);
    expect(r.body).toEqual({ complete_before: ["complete_before must not be earlier than complete_after."] });
  });

  it("serializes concurrent writes to one task through its Durable Object: none is lost", async () => {
    const acc = await newAccount();
    await defineMetafields(
      acc,
      "tasks",
      Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${i}`, "integer"])),
    );
    const t = await createTask(acc);
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        api(t.url, { method: "PATCH", token: acc.admin.token, body: { metafields: { [`k${i}`]: i } } }),
      ),
    );
    for (const r of replies) expectStatus(r, 200);
    expect(await version(t.id)).toBe(9);
    expect((await eventTypes(t.id)).filter((e) => e === "task.updated")).toHaveLength(8);
  });

  it("wins against a writer outside the object by compare-and-set on the version", async () => {
    const acc = await newAccount();
    const t = await createTask(acc);
    // Another writer (an order upsert, the geocode queue) moves the version meanwhile.
    await stored.prepare("UPDATE tasks SET version = version + 5 WHERE id = ?").bind(t.id).run();
    const r = await api(t.url, { method: "PATCH", token: acc.admin.token, body: { description: "after" } });
    expectStatus(r, 200);
    expect(await version(t.id)).toBe(7);
  });

  it("fills an empty contact from a contact address", async () => {
    const acc = await newAccount();
    const ca = await api("/contact_addresses/", {
      token: acc.admin.token,
      body: { address: { raw_address: "Tartu, Estonia" }, contact: { name: "Front desk" } },
    });
    const t = await createTask(acc, { contact: undefined });
    expect(t.contact.name).toBe("");
    const r = await api(t.url, {
      method: "PATCH",
      token: acc.admin.token,
      body: { contact_address: ca.body.url },
    });
    expectStatus(r, 200);
    expect(r.body.contact.name).toBe("Front desk");
    expect(r.body.address).toEqual(t.address);
    const filtered = await api(`/tasks/?contact_address=${ca.body.id}`, { token: acc.admin.token });
    expect(filtered.body.results.map((x: any) => x.id)).toEqual([t.id]);
  });

  it("is 404 for another account's task or a bad id, 403 for a worker", async () => {
    const acc = await newAccount();
    const other = await newAccount();
    const t = await createTask(other);
    expectStatus(
      await api(t.url, { method: "PATCH", token: acc.admin.token, body: { description: "x" } }),
      404,
    );
    expectStatus(await api("/tasks/not-a-uuid/", { method: "PATCH", token: acc.admin.token, body: {} }), 404);
    const worker = await addUser(acc, "worker");
    const mine = await createTask(acc, { assignee: worker.user });
    expectStatus(
      await api(mine.url, { method: "PATCH", token: worker.token, body: { description: "x" } }),
      403,
    );
  });
});

describe("PUT /tasks/{id}/", () => {
  it("replaces the writable fields: what is left out takes its default; state is ignored", async () => {
    const acc = await newAccount();
    await defineMetafields(acc, "tasks", { a: "integer" });
    const t = await createTask(acc, { position: 3, metafields: { a: 1 } });
    const r = await api(t.url, {
      method: "PUT",
      token: acc.admin.token,
      body: { account: acc.account.url, category: "pick_up", address: t.address, state: "completed" },
    });
    expectStatus(r, 200);
    expect(r.body).toMatchObject({
      state: "unassigned",
      category: "pick_up",
      description: "",
      position: null,
      metafields: {},
      complete_after: null,
      contact: { name: "", company: "", emails: [], phones: [], notes: "" },
      address: t.address,
    });
    const missing = await api(t.url, { method: "PUT", token: acc.admin.token, body: { description: "x" } });
    expectStatus(missing, 400);
    expect(Object.keys(missing.body).sort()).toEqual(["account", "address", "category"]);
  });
});

describe("DELETE /tasks/{id}/", () => {
  it("deletes through the task's object with a task.deleted event", async () => {
    const acc = await newAccount();
    const t = await createTask(acc);
    expectStatus(await api(t.url, { method: "DELETE", token: acc.admin.token }), 204);
    expectStatus(await api(t.url, { token: acc.admin.token }), 404);
    expectStatus(await api(t.url, { method: "DELETE", token: acc.admin.token }), 404);
    expect(await eventTypes(t.id)).toEqual(["task.created", "task.deleted"]);
    const other = await newAccount();
    const theirs = await createTask(other);
    expectStatus(await api(theirs.url, { method: "DELETE", token: acc.admin.token }), 404);
  });
});

describe("sample body reuse", () => {
  it("accepts a body copied from a GET as a PUT", async () => {
    const acc = await newAccount();
    const t = await createTask(acc, sampleTask(acc, { duration: "00:10:00" }));
    const r = await api(t.url, { method: "PUT", token: acc.admin.token, body: t });
    expectStatus(r, 200);
    const { updated_at: _u1, ...before } = t;
    const { updated_at: _u2, ...after } = r.body;
    expect(after).toEqual(before);
  });
});
