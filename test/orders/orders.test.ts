import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { writeOrders } from "../../src/services/orders";
import {
  addUser,
  adminPrincipal,
  expectStatus,
  newAccount,
  storedEvents,
  type TestAccount,
} from "../helpers";
import { stored } from "../stored";
import { api } from "../tasks/helpers";

const NOT_EXIST = ["Invalid hyperlink - Object does not exist."];

const taskData = (i: number, extra: Record<string, unknown> = {}) => ({
  category: i % 2 ? "drop_off" : "pick_up",
  address: { raw_address: i % 2 ? "Tartu, Estonia" : "Tallinn, Estonia" },
  contact: { name: `Stop ${i}`, notes: "ring" },
  description: `stop ${i}`,
  complete_after: "2030-06-01T09:00:00Z",
  complete_before: "2030-06-01T17:00:00Z",
  ...extra,
});

const orderBody = (acc: TestAccount, extra: Record<string, unknown> = {}) => ({
  account: acc.account.url,
  reference: "PO-1",
  description: "Weekly delivery",
  orderer: { name: "Acme Shop" },
  tasks_data: [taskData(0), taskData(1)],
  ...extra,
});

async function count(sql: string, ...params: unknown[]) {
  return (await stored
    .prepare(sql)
    .bind(...params)
    .first<{ n: number }>())!.n;
}
const tasksOf = (orderId: string) =>
  stored
    .prepare(
      "SELECT id, state, order_index, description, assignee_id FROM tasks WHERE order_id = ? ORDER BY order_index",
    )
    .bind(orderId)
    .all<{
      id: string;
      state: string;
      order_index: number;
      description: string;
      assignee_id: string | null;
    }>()
    .then((r) => r.results);

describe("POST /orders/ (interface §4.8)", () => {
  it("creates an order and its tasks_data in one batch, with events", async () => {
    const acc = await newAccount();
    const r = await api("/orders/", { token: acc.admin.token, body: orderBody(acc) });
    expectStatus(r, 201);
    const o = r.body;
    expect(o).toMatchObject({
      url: `https://api.test/orders/${o.id}/`,
      account: acc.account.url,
      external_id: null,
      reference: "PO-1",
      description: "Weekly delivery",
      orderer: { name: "Acme Shop" },
      client: null,
      assignee: null,
      auto_assign: false,
      created_by: acc.admin.user,
      recurrence: null,
      documents: [],
    });
    expect(o.tasks).toHaveLength(2);
    const first = await api(o.tasks[0], { token: acc.admin.token });
    expect(first.body).toMatchObject({
      order: o.url,
      state: "unassigned",
      category: "pick_up",
      description: "stop 0",
      contact: { name: "Stop 0", notes: "ring" },
    });
    expect(first.body.address.formatted_address).toMatch(/Tallinn/);
    const results = await storedEvents({ accountId: acc.account.id });
    expect(results.map((e) => e.type).sort()).toEqual(["order.created", "task.created", "task.created"]);
    const read = await api(o.url, { token: acc.admin.token });
    expect(read.body).toEqual(o);
  });

  it("upserts by external_id: same order, same task ids, no duplicates, fields sent replaced", async () => {
    const acc = await newAccount();
    const body = orderBody(acc, { external_id: "ext-42" });
    const first = await api("/orders/", { token: acc.admin.token, body });
    expectStatus(first, 201);
    const second = await api("/orders/", {
      token: acc.admin.token,
      body: {
        ...body,
        reference: "PO-2",
        description: undefined,
        tasks_data: [taskData(0, { description: "changed" }), taskData(1)],
      },
    });
    expectStatus(second, 200);
    expect(second.body.id).toBe(first.body.id);
    expect(second.body.tasks).toEqual(first.body.tasks);
    expect(second.body).toMatchObject({ reference: "PO-2", description: "Weekly delivery" });
    const third = await api("/orders/", { token: acc.admin.token, body });
    expectStatus(third, 200);
    expect(third.body.tasks).toEqual(first.body.tasks);
    expect(await count("SELECT COUNT(*) AS n FROM orders WHERE account_id = ?", acc.account.id)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM tasks WHERE account_id = ?", acc.account.id)).toBe(2);
    const rows = await tasksOf(first.body.id);
    expect(rows.map((t) => t.description)).toEqual(["stop 0", "stop 1"]);
  });

  it("updates the i-th task, adds extra entries, cancels unstarted tasks past the end", async () => {
    const acc = await newAccount();
    const body = orderBody(acc, {
      external_id: "grow-shrink",
      tasks_data: [taskData(0), taskData(1), taskData(2), taskData(3)],
    });
    const first = await api("/orders/", { token: acc.admin.token, body });
    expectStatus(first, 201);
    const ids = first.body.tasks.map((u: string) => u.split("/").at(-2));
    // Task 3 has started: the upsert must not cancel it.
    await stored.prepare("UPDATE tasks SET state = 'transit' WHERE id = ?").bind(ids[3]).run();
    const shrink = await api("/orders/", {
      token: acc.admin.token,
      body: { ...body, tasks_data: [taskData(0)] },
    });
    expectStatus(shrink, 200);
    expect((await tasksOf(first.body.id)).map((t) => t.state)).toEqual([
      "unassigned",
      "cancelled",
      "cancelled",
      "transit",
    ]);
    expect(shrink.body.tasks).toEqual(first.body.tasks);

    const grow = await api("/orders/", {
      token: acc.admin.token,
      body: { ...body, tasks_data: [0, 1, 2, 3, 4, 5].map((i) => taskData(i)) },
    });
    expectStatus(grow, 200);
    const rows = await tasksOf(first.body.id);
    expect(rows.map((t) => t.order_index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(rows.slice(0, 4).map((t) => t.id)).toEqual(ids);
    expect(rows.slice(4).map((t) => t.state)).toEqual(["unassigned", "unassigned"]);
    // The absence of tasks_data leaves the tasks alone.
    const noTasks = await api("/orders/", {
      token: acc.admin.token,
      body: { account: acc.account.url, external_id: "grow-shrink", reference: "only this" },
    });
    expectStatus(noTasks, 200);
    expect(noTasks.body.tasks).toHaveLength(6);
    expect((await tasksOf(first.body.id)).filter((t) => t.state === "cancelled")).toHaveLength(2);
  });

  it("never duplicates an order or a task when the same order is posted concurrently", async () => {
    const acc = await newAccount();
    const body = orderBody(acc, { external_id: "race", tasks_data: [taskData(0), taskData(1), taskData(2)] });
    const replies = await Promise.all(
      Array.from({ length: 6 }, () => api("/orders/", { token: acc.admin.token, body })),
    );
    for (const r of replies) expect([200, 201]).toContain(r.status);
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
    expect(replies.filter((r) => r.status === 201).length).toBeGreaterThanOrEqual(1);
    expect(await count("SELECT COUNT(*) AS n FROM orders WHERE account_id = ?", acc.account.id)).toBe(1);
    const rows = await tasksOf(replies[0].body.id);
    expect(rows.map((t) => t.order_index)).toEqual([0, 1, 2]);
    expect(await count("SELECT COUNT(*) AS n FROM tasks WHERE account_id = ?", acc.account.id)).toBe(3);
  });

  it("takes an array: answers an array in input order; one invalid item stores nothing", async () => {
    const acc = await newAccount();
    const bodies = [0, 1, 2].map((i) => orderBody(acc, { reference: `R${i}`, tasks_data: [taskData(i)] }));
    const r = await api("/orders/", { token: acc.admin.token, body: bodies });
    expectStatus(r, 201);
    expect(r.body.map((o: any) => o.reference)).toEqual(["R0", "R1", "R2"]);
    expect(r.body.every((o: any) => o.tasks.length === 1)).toBe(true);

    const other = await newAccount();
    const bad = await api("/orders/", {
      token: other.admin.token,
      body: [
        orderBody(other),
        orderBody(other, { tasks_data: [taskData(0), taskData(1, { category: "teleport" })] }),
        orderBody(other, { tasks_data: [taskData(0, { address: undefined })] }),
      ],
    });
    expectStatus(bad, 400);
    expect(bad.body).toEqual([
      {},
      { tasks_data: [{}, { category: [expect.stringMatching(/not a valid choice/)] }] },
      {},
    ]);
    const semantic = await api("/orders/", {
      token: other.admin.token,
      body: [
        orderBody(other),
        orderBody(other, { tasks_data: [taskData(0), taskData(1, { address: undefined })] }),
      ],
    });
    expectStatus(semantic, 400);
    expect(semantic.body).toEqual([{}, { tasks_data: [{}, { address: ["This field is required."] }] }]);
    expect(await count("SELECT COUNT(*) AS n FROM orders WHERE account_id = ?", other.account.id)).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM tasks WHERE account_id = ?", other.account.id)).toBe(0);
  });

  it("enforces 100 orders per request and 500 tasks per order, storing nothing past a limit", async () => {
    const acc = await newAccount();
    const small = orderBody(acc, { tasks_data: [] });
    const many = await api("/orders/", {
      token: acc.admin.token,
      body: Array.from({ length: 101 }, () => small),
    });
    expectStatus(many, 400);
    expect(many.body).toEqual({
      non_field_errors: ["Too many orders in one request: 101. The limit is 100 orders per request."],
    });
    const big = orderBody(acc, { tasks_data: Array.from({ length: 501 }, (_, i) => taskData(i)) });
    const tooBig = await api("/orders/", { token: acc.admin.token, body: big });
    expectStatus(tooBig, 400);
    expect(tooBig.body).toEqual({
      tasks_data: ["Too many tasks in one order: 501. The limit is 500 tasks per order (tasks_data)."],
    });
    const inArray = await api("/orders/", { token: acc.admin.token, body: [small, big] });
    expectStatus(inArray, 400);
    expect(inArray.body[0]).toEqual({});
    expect(inArray.body[1].tasks_data[0]).toMatch(/limit is 500/);
    expect(await count("SELECT COUNT(*) AS n FROM orders WHERE account_id = ?", acc.account.id)).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM tasks WHERE account_id = ?", acc.account.id)).toBe(0);

    // At the limits exactly: stored.
    const full = await api("/orders/", {
      token: acc.admin.token,
      body: orderBody(acc, { tasks_data: Array.from({ length: 500 }, (_, i) => taskData(i)) }),
    });
    expectStatus(full, 201);
    expect(full.body.tasks).toHaveLength(500);
    expect(await count("SELECT COUNT(*) AS n FROM tasks WHERE order_id = ?", full.body.id)).toBe(500);
    const hundred = await api("/orders/", {
      token: acc.admin.token,
      body: Array.from({ length: 100 }, () => small),
    });
    expectStatus(hundred, 201);
    expect(hundred.body).toHaveLength(100);
  });

  it("auto-assigns new tasks to the active worker with the fewest open tasks, ties to the earliest role", async () => {
    const acc = await newAccount();
    const w1 = await addUser(acc, "worker", "w1");
    const w2 = await addUser(acc, "worker", "w2");
    const w3 = await addUser(acc, "worker", "w3");
    // w3 is not active: never picked.
    const roles = await api(`/account_roles/?role=worker`, { token: acc.admin.token });
    const w3Role = roles.body.results.find((r: any) => r.user === w3.user);
    expectStatus(
      await api(w3Role.url, { method: "PATCH", token: acc.admin.token, body: { is_active: false } }),
      200,
    );
    // w1 already holds one open task.
    await api("/orders/", {
      token: acc.admin.token,
      body: orderBody(acc, { assignee: w1.user, tasks_data: [taskData(9)] }),
    });
    const r = await api("/orders/", {
      token: acc.admin.token,
      body: orderBody(acc, {
        auto_assign: true,
        tasks_data: [taskData(0), taskData(1), taskData(2), taskData(3, { assignee: w3.user })],
      }),
    });
    expectStatus(r, 400);
    expect(r.body).toEqual({ tasks_data: [{}, {}, {}, { assignee: NOT_EXIST }] });
    const ok = await api("/orders/", {
      token: acc.admin.token,
      body: orderBody(acc, { auto_assign: true, tasks_data: [taskData(0), taskData(1), taskData(2)] }),
    });
    expectStatus(ok, 201);
    const rows = await tasksOf(ok.body.id);
    expect(rows.map((t) => t.assignee_id)).toEqual([w2.userId, w1.userId, w2.userId]);
    expect(rows.map((t) => t.state)).toEqual(["assigned", "assigned", "assigned"]);
  });

  it("gives new tasks the order's assignee", async () => {
    const acc = await newAccount();
    const w = await addUser(acc, "worker");
    const r = await api("/orders/", { token: acc.admin.token, body: orderBody(acc, { assignee: w.user }) });
    expectStatus(r, 201);
    expect(r.body.assignee).toBe(w.user);
    expect((await tasksOf(r.body.id)).map((t) => [t.assignee_id, t.state])).toEqual([
      [w.userId, "assigned"],
      [w.userId, "assigned"],
    ]);
  });

  it("treats another account's user, contact address or account as not existing; its orders as 404", async () => {
    const acc = await newAccount();
    const other = await newAccount();
    const theirWorker = await addUser(other, "worker");
    const theirCa = await api("/contact_addresses/", {
      token: other.admin.token,
      body: { address: { raw_address: "Tartu, Estonia" } },
    });
    const r = await api("/orders/", {
      token: acc.admin.token,
      body: orderBody(acc, {
        account: other.account.url,
        assignee: theirWorker.user,
        client: "https://api.test/clients/01a20000-0000-7000-8000-000000000000/",
        tasks_data: [taskData(0, { contact_address: theirCa.body.url })],
      }),
    });
    expectStatus(r, 400);
    expect(r.body).toEqual({
      account: NOT_EXIST,
      assignee: NOT_EXIST,
      client: NOT_EXIST,
      tasks_data: [{ contact_address: NOT_EXIST }],
    });
    const theirs = await api("/orders/", {
      token: other.admin.token,
      body: orderBody(other, { external_id: "x" }),
    });
    expectStatus(await api(theirs.body.url, { token: acc.admin.token }), 404);
    expectStatus(await api(theirs.body.url, { method: "PATCH", token: acc.admin.token, body: {} }), 404);
    expectStatus(await api(theirs.body.url, { method: "DELETE", token: acc.admin.token }), 404);
    // The same external_id in another account is another order.
    const mine = await api("/orders/", {
      token: acc.admin.token,
      body: orderBody(acc, { external_id: "x" }),
    });
    expectStatus(mine, 201);
    expect(mine.body.id).not.toBe(theirs.body.id);
  });

  it("is for dispatchers only", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    expectStatus(await api("/orders/", { token: worker.token, body: orderBody(acc) }), 403);
    expectStatus(await api("/orders/", { token: worker.token }), 403);
  });
});

describe("GET, PATCH, DELETE /orders/", () => {
  it("lists with tasks, filters by external_id, expands documents", async () => {
    const acc = await newAccount();
    const a = await api("/orders/", { token: acc.admin.token, body: orderBody(acc, { external_id: "a" }) });
    const b = await api("/orders/", {
      token: acc.admin.token,
      body: orderBody(acc, { external_id: "b", tasks_data: [] }),
    });
    const list = await api("/orders/", { token: acc.admin.token });
    expectStatus(list, 200);
    expect(list.body.results.map((o: any) => o.id)).toEqual([a.body.id, b.body.id]);
    expect(list.body.results[0].tasks).toEqual(a.body.tasks);
    const byExt = await api("/orders/?external_id=b", { token: acc.admin.token });
    expect(byExt.body.results.map((o: any) => o.id)).toEqual([b.body.id]);
    expectStatus(await api("/orders/?colour=red", { token: acc.admin.token }), 400);
    expectStatus(await api("/orders/?expand=tasks", { token: acc.admin.token }), 400);

    const docId = crypto.randomUUID();
    const now = Date.now();
    await stored
      .prepare(
        `INSERT INTO attachments (id, kind, account_id, task_id, order_id, file_name, key, description, created_at, updated_at)
       VALUES (?, 'document', ?, NULL, ?, 'proof of delivery.pdf', ?, 'POD', ?, ?)`,
      )
      .bind(docId, acc.account.id, a.body.id, `documents/${docId}/proof of delivery.pdf`, now, now)
      .run();
    const plain = await api(a.body.url, { token: acc.admin.token });
    expect(plain.body.documents).toEqual([`https://api.test/documents/${docId}/`]);
    const expanded = await api(`${a.body.url}?expand=documents`, { token: acc.admin.token });
    expect(expanded.body.documents).toEqual([
      expect.objectContaining({
        id: docId,
        url: `https://api.test/documents/${docId}/`,
        order: a.body.url,
        file_name: "proof of delivery.pdf",
        description: "POD",
        file: expect.stringMatching(/^https:\/\/api\.test\/.*proof%20of%20delivery\.pdf$/),
      }),
    ]);
    const expandedList = await api("/orders/?expand=documents", { token: acc.admin.token });
    expect(expandedList.body.results[0].documents[0].id).toBe(docId);
  });

  it("PATCH changes the fields sent; DELETE keeps the tasks without their order", async () => {
    const acc = await newAccount();
    const o = (await api("/orders/", { token: acc.admin.token, body: orderBody(acc, { external_id: "p" }) }))
      .body;
    const p = await api(o.url, {
      method: "PATCH",
      token: acc.admin.token,
      body: { reference: "PO-9", orderer: null },
    });
    expectStatus(p, 200);
    expect(p.body).toMatchObject({
      reference: "PO-9",
      orderer: null,
      description: "Weekly delivery",
      tasks: o.tasks,
    });
    const grow = await api(o.url, {
      method: "PATCH",
      token: acc.admin.token,
      body: { tasks_data: [taskData(0), taskData(1), taskData(2)] },
    });
    expectStatus(grow, 200);
    expect(grow.body.tasks.slice(0, 2)).toEqual(o.tasks);
    expect(grow.body.tasks).toHaveLength(3);
    const other = (
      await api("/orders/", { token: acc.admin.token, body: orderBody(acc, { external_id: "q" }) })
    ).body;
    const clash = await api(o.url, { method: "PATCH", token: acc.admin.token, body: { external_id: "q" } });
    expectStatus(clash, 400);
    expect(clash.body).toEqual({ external_id: ["order with this external id already exists."] });
    expect(other.id).not.toBe(o.id);

    expectStatus(await api(o.url, { method: "DELETE", token: acc.admin.token }), 204);
    expectStatus(await api(o.url, { token: acc.admin.token }), 404);
    const task = await api(o.tasks[0], { token: acc.admin.token });
    expectStatus(task, 200);
    expect(task.body.order).toBeNull();
  });
});

describe("order upsert race (service level, no HTTP in between)", () => {
  it("ends with one order and one task per index when every writer planned a creation", async () => {
    const acc = await newAccount();
    const principal = adminPrincipal(acc);
    const body = orderBody(acc, {
      external_id: "service-race",
      tasks_data: [taskData(0), taskData(1, { description: "v" })],
    });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        writeOrders(env, principal, [{ ...body, reference: `R${i}` } as never], {
          isArray: false,
          target: { kind: "post" },
          zone: null,
          baseUrl: "https://api.test",
        }),
      ),
    );
    const orderIds = new Set(results.map(([r]) => r.row.id));
    expect(orderIds.size).toBe(1);
    expect(results.filter(([r]) => r.created)).toHaveLength(1);
    for (const [r] of results) expect(r.taskIds).toEqual(results[0][0].taskIds);
    expect(await count("SELECT COUNT(*) AS n FROM orders WHERE account_id = ?", acc.account.id)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM tasks WHERE account_id = ?", acc.account.id)).toBe(2);
    // Exactly one order.created and one task.created per task: the losers' planned creations left no events.
    expect(
      await count(
        "SELECT COUNT(*) AS n FROM events WHERE account_id = unhex(?, '-') AND type = 'order.created'",
        acc.account.id,
      ),
    ).toBe(1);
    expect(
      await count(
        "SELECT COUNT(*) AS n FROM events WHERE account_id = unhex(?, '-') AND type = 'task.created'",
        acc.account.id,
      ),
    ).toBe(2);
  });
});
