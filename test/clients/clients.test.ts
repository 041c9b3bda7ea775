import { describe, expect, it } from "vitest";
import { addUser, call, defineMetafields, expectStatus, newAccount } from "../helpers";

const taskBody = (acc: any, extra: Record<string, unknown> = {}) => ({
  account: acc.account.url,
  category: "drop_off",
  address: { raw_address: "Tallinn" },
  ...extra,
});

describe("/clients/ (contract §13)", () => {
  it("creates, reads, changes and deletes clients; dispatchers only", async () => {
    const acc = await newAccount();
    const r = await call("/clients/", {
      token: acc.admin.token,
      body: {
        name: "Kahvila Aalto",
        emails: ["a@example.com"],
        phones: ["+358401234567"],
        notes: "Back door",
      },
    });
    expectStatus(r, 201);
    expect(r.body).toMatchObject({
      name: "Kahvila Aalto",
      external_id: null,
      emails: ["a@example.com"],
      phones: ["+358401234567"],
      notes: "Back door",
      metafields: {},
      account: acc.account.url,
    });
    const patched = await call(`/clients/${r.body.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { notes: "" },
    });
    expect(patched.body).toMatchObject({ name: "Kahvila Aalto", notes: "", emails: ["a@example.com"] });
    const put = await call(`/clients/${r.body.id}/`, {
      method: "PUT",
      token: acc.admin.token,
      body: { name: "Aalto" },
    });
    expect(put.body).toMatchObject({ name: "Aalto", emails: [], phones: [], notes: "" });
    const worker = await addUser(acc, "worker");
    expectStatus(await call(`/clients/${r.body.id}/`, { token: worker.token }), 403);
    expectStatus(await call("/clients/", { token: worker.token, body: { name: "x" } }), 403);
    for (const body of [
      {},
      { name: "" },
      { name: "x", emails: ["not-an-email"] },
      { name: "x", metafields: { tier: "gold" } },
    ]) {
      expectStatus(await call("/clients/", { token: acc.admin.token, body }), 400);
    }
    expectStatus(await call(`/clients/${r.body.id}/`, { method: "DELETE", token: acc.admin.token }), 204);
    expectStatus(await call(`/clients/${r.body.id}/`, { token: acc.admin.token }), 404);
  });

  it("upserts by external_id: a known one updates the fields sent (200)", async () => {
    const acc = await newAccount();
    const first = await call("/clients/", {
      token: acc.admin.token,
      body: { name: "Store", external_id: "CRM-1", notes: "keep me" },
    });
    expectStatus(first, 201);
    const again = await call("/clients/", {
      token: acc.admin.token,
      body: { name: "Store Oy", external_id: "CRM-1" },
    });
    expectStatus(again, 200);
    expect(again.body).toMatchObject({ id: first.body.id, name: "Store Oy", notes: "keep me" });
    const both = await Promise.all(
      [1, 2, 3].map((i) =>
        call("/clients/", { token: acc.admin.token, body: { name: `S${i}`, external_id: "CRM-2" } }),
      ),
    );
    expect(new Set(both.map((x) => x.body.id)).size).toBe(1);
    const list = await call("/clients/?external_id=CRM-2", { token: acc.admin.token });
    expect(list.body.results).toHaveLength(1);
    // Another account may use the same external_id.
    const other = await newAccount();
    expectStatus(
      await call("/clients/", { token: other.admin.token, body: { name: "S", external_id: "CRM-1" } }),
      201,
    );
  });

  it("validates metafields defined for clients", async () => {
    const acc = await newAccount();
    await defineMetafields(acc, "clients", { tier: "string" });
    expectStatus(
      await call("/clients/", { token: acc.admin.token, body: { name: "x", metafields: { tier: "gold" } } }),
      201,
    );
    const bad = await call("/clients/", {
      token: acc.admin.token,
      body: { name: "x", metafields: { tier: 1 } },
    });
    expectStatus(bad, 400);
    expect(Object.keys(bad.body.metafields)).toEqual(["tier"]);
  });

  it("orders and tasks carry client, filter by it, and keep existing when it is deleted", async () => {
    const acc = await newAccount();
    const c = (await call("/clients/", { token: acc.admin.token, body: { name: "Aalto" } })).body;
    const order = await call("/orders/", {
      token: acc.admin.token,
      body: { account: acc.account.url, client: c.url, tasks_data: [taskBody(acc, { client: c.url })] },
    });
    expectStatus(order, 201);
    expect(order.body.client).toBe(c.url);
    const task = await call("/tasks/", { token: acc.admin.token, body: taskBody(acc, { client: c.url }) });
    expectStatus(task, 201);
    expect(task.body.client).toBe(c.url);
    await call("/tasks/", { token: acc.admin.token, body: taskBody(acc) });
    const tasks = await call(`/tasks/?client=${c.id}`, { token: acc.admin.token });
    expect(tasks.body.results).toHaveLength(2);
    const orders = await call(`/orders/?client=${encodeURIComponent(c.url)}`, { token: acc.admin.token });
    expect(orders.body.results.map((o: any) => o.id)).toEqual([order.body.id]);
    expectStatus(await call(`/clients/${c.id}/`, { method: "DELETE", token: acc.admin.token }), 204);
    const after = await call(`/tasks/${task.body.id}/`, { token: acc.admin.token });
    expect(after.body.client).toBeNull();
    const o = await call(`/orders/${order.body.id}/`, { token: acc.admin.token });
    expect(o.body.client).toBeNull();
  });

  it("another account's client is 'does not exist' on tasks and orders", async () => {
    const acc = await newAccount();
    const other = await newAccount();
    const theirs = (await call("/clients/", { token: other.admin.token, body: { name: "Theirs" } })).body;
    const task = await call("/tasks/", {
      token: acc.admin.token,
      body: taskBody(acc, { client: theirs.url }),
    });
    expectStatus(task, 400);
    expect(task.body.client).toEqual(["Invalid hyperlink - Object does not exist."]);
    const order = await call("/orders/", {
      token: acc.admin.token,
      body: { account: acc.account.url, client: theirs.url },
    });
    expectStatus(order, 400);
    expect(order.body.client).toEqual(["Invalid hyperlink - Object does not exist."]);
    expectStatus(await call(`/clients/${theirs.id}/`, { token: acc.admin.token }), 404);
  });
});
