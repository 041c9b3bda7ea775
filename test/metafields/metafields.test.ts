import { describe, expect, it } from "vitest";
import { finished } from "../exports/support";
import { insertTask, taskRow } from "../factories";
import { addUser, BASE, call, expectStatus, newAccount, type TestAccount } from "../helpers";

let n = 0;
const ext = () => `mf-${Date.now()}-${n++}-${crypto.randomUUID().slice(0, 6)}`;

async function define(acc: TestAccount, body: Record<string, unknown>) {
  const r = await call("/metafields/", { token: acc.admin.token, body: { applies_to: "tasks", ...body } });
  expectStatus(r, 201);
  return r.body;
}

const taskBody = (acc: TestAccount, extra: Record<string, unknown> = {}) => ({
  account: acc.account.url,
  category: "drop_off",
  address: { raw_address: "Tallinn" },
  ...extra,
});

async function command(token: string, task: { url: string }, action: string, task_data?: unknown) {
  const r = await call("/task_commands/", {
    token,
    body: { task: task.url, external_id: ext(), time: new Date().toISOString(), action, task_data },
  });
  expect([200, 201], r.text).toContain(r.status);
  return r.body;
}

describe("metafield definitions (contract §12)", () => {
  it("admins and managers define, everyone reads; keys unique per target; other accounts 404", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const manager = await addUser(acc, "manager");
    const def = await define(acc, { key: "door_code", label: "Door code", value_type: "string" });
    expect(def).toMatchObject({
      key: "door_code",
      applies_to: "tasks",
      choices: [],
      is_required_before_complete: false,
      is_editable_by_worker: true,
      hide_when_empty: false,
      source: "manual",
    });
    expectStatus(await call(`/metafields/${def.id}/`, { token: worker.token }), 200);
    expectStatus(
      await call("/metafields/", {
        token: worker.token,
        body: { key: "x", applies_to: "tasks", value_type: "text" },
      }),
      403,
    );
    const dup = await call("/metafields/", {
      token: manager.token,
      body: { key: "door_code", applies_to: "tasks", value_type: "text" },
    });
    expectStatus(dup, 400);
    expect(Object.keys(dup.body)).toEqual(["key"]);
    // The same key on another target is another metafield.
    expectStatus(
      await call("/metafields/", {
        token: manager.token,
        body: { key: "door_code", applies_to: "orders", value_type: "text" },
      }),
      201,
    );
    for (const body of [
      { key: "Bad-Key", applies_to: "tasks", value_type: "text" },
      { key: "s", applies_to: "tasks", value_type: "select" },
      { key: "r", applies_to: "orders", value_type: "text", is_required_before_complete: true },
      { key: "t", applies_to: "trucks", value_type: "text" },
    ]) {
      expectStatus(await call("/metafields/", { token: acc.admin.token, body }), 400);
    }
    const other = await newAccount();
    expectStatus(await call(`/metafields/${def.id}/`, { token: other.admin.token }), 404);
    expectStatus(await call(`/metafields/${def.id}/`, { method: "DELETE", token: other.admin.token }), 404);
  });
});

describe("metafields validated on every write", () => {
  it("accepts and rejects values per value type", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const cases: [Record<string, unknown>, unknown[], unknown[]][] = [
      [{ value_type: "string" }, ["one line", ""], [5, "two\nlines", "x".repeat(256)]],
      [{ value_type: "text" }, ["many\nlines"], [true]],
      [{ value_type: "number" }, [1.5, -2], ["1", { n: 1 }]],
      [{ value_type: "integer" }, [3], [3.5, "3"]],
      [{ value_type: "boolean" }, [true, false], ["true", 0]],
      [{ value_type: "date" }, ["2026-02-28"], ["2026-02-30", "28.02.2026"]],
      [{ value_type: "datetime" }, ["2026-02-28T10:00:00Z"], ["2026-02-28T10:00:00", "yesterday"]],
      [{ value_type: "select", choices: ["a", "b"] }, ["a"], ["c", ["a"]]],
      [{ value_type: "multiselect", choices: ["a", "b"] }, [["a", "b"], []], ["a", ["c"]]],
      [
        { value_type: "assignee" },
        [worker.user, worker.userId],
        ["not-a-user", `${BASE}/users/${crypto.randomUUID()}/`],
      ],
      [{ value_type: "link" }, ["https://example.org/x"], ["ftp://example.org", "javascript:alert(1)"]],
    ];
    for (const [i, [def, good, bad]] of cases.entries()) {
      const key = `f${i}`;
      await define(acc, { key, ...def });
      for (const value of good) {
        const r = await call("/tasks/", {
          token: acc.admin.token,
          body: taskBody(acc, { metafields: { [key]: value } }),
        });
        expectStatus(r, 201);
        expect(r.body.metafields[key]).toEqual(value);
      }
      for (const value of bad) {
        const r = await call("/tasks/", {
          token: acc.admin.token,
          body: taskBody(acc, { metafields: { [key]: value } }),
        });
        expectStatus(r, 400);
        expect(Object.keys(r.body.metafields), `${def.value_type} ${JSON.stringify(value)}`).toEqual([key]);
      }
    }
    // Nothing of the refused writes was stored.
    const list = await call("/tasks/?page_size=200", { token: acc.admin.token });
    expect(list.body.results).toHaveLength(cases.reduce((s, c) => s + c[1].length, 0));
  });

  it("refuses unknown keys, another account's users and 10,000-key objects, everywhere", async () => {
    const acc = await newAccount();
    await define(acc, { key: "owner", value_type: "assignee" });
    const other = await newAccount();
    const unknown = await call("/tasks/", {
      token: acc.admin.token,
      body: taskBody(acc, { metafields: { nope: 1 } }),
    });
    expectStatus(unknown, 400);
    expect(unknown.body).toEqual({ metafields: { nope: ["Unknown metafield."] } });
    const stranger = await call("/tasks/", {
      token: acc.admin.token,
      body: taskBody(acc, { metafields: { owner: other.admin.user } }),
    });
    expectStatus(stranger, 400);
    expect(stranger.body.metafields.owner).toEqual(["Expected a user of this account."]);
    const huge = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
    expectStatus(
      await call("/tasks/", { token: acc.admin.token, body: taskBody(acc, { metafields: huge }) }),
      400,
    );
    const order = await call("/orders/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        tasks_data: [taskBody(acc), taskBody(acc, { metafields: { nope: 1 } })],
      },
    });
    expectStatus(order, 400);
    expect(order.body.tasks_data).toEqual([{}, { metafields: { nope: ["Unknown metafield."] } }]);
    const orderOwn = await call("/orders/", {
      token: acc.admin.token,
      body: { account: acc.account.url, metafields: { nope: 1 } },
    });
    expectStatus(orderOwn, 400);
    expect(orderOwn.body).toEqual({ metafields: { nope: ["Unknown metafield."] } });
    await call("/metafields/", {
      token: acc.admin.token,
      body: { key: "po", applies_to: "orders", value_type: "integer" },
    });
    const upsert = async (po: unknown) =>
      call("/orders/", {
        token: acc.admin.token,
        body: { account: acc.account.url, external_id: "ext-po", metafields: { po } },
      });
    expectStatus(await upsert(7), 201);
    const wrong = await upsert("seven");
    expectStatus(wrong, 400);
    expect(Object.keys(wrong.body.metafields)).toEqual(["po"]);
    const ok = await upsert(8);
    expectStatus(ok, 200);
    expect(ok.body.metafields).toEqual({ po: 8 });
    const ca = await call("/contact_addresses/", {
      token: acc.admin.token,
      body: { address: { raw_address: "Tartu" }, metafields: { owner: acc.admin.user } },
    });
    expectStatus(ca, 400);
    expect(ca.body.metafields.owner).toEqual(["Unknown metafield."]);
    const tasks = await call("/tasks/", { token: acc.admin.token });
    expect(tasks.body.results).toEqual([]);
  });

  it("PATCH replaces the object; deleting a definition leaves stored values alone", async () => {
    const acc = await newAccount();
    const def = await define(acc, { key: "floor", value_type: "integer" });
    await define(acc, { key: "note", value_type: "text" });
    const t = await call("/tasks/", {
      token: acc.admin.token,
      body: taskBody(acc, { metafields: { floor: 3, note: "x" } }),
    });
    expectStatus(await call(`/metafields/${def.id}/`, { method: "DELETE", token: acc.admin.token }), 204);
    const back = await call(`/tasks/${t.body.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { metafields: { floor: 3, note: "y" } },
    });
    expectStatus(back, 200);
    expect(back.body.metafields).toEqual({ floor: 3, note: "y" });
    const changed = await call(`/tasks/${t.body.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { metafields: { floor: 4 } },
    });
    expectStatus(changed, 400);
  });
});

describe("metafields in task commands", () => {
  it("update merges key by key; a wrong value rejects the command with the message", async () => {
    const acc = await newAccount();
    await define(acc, { key: "floor", value_type: "integer" });
    await define(acc, { key: "note", value_type: "text" });
    const t = await call("/tasks/", {
      token: acc.admin.token,
      body: taskBody(acc, { metafields: { floor: 3 } }),
    });
    const ok = await command(acc.admin.token, t.body, "update", { metafields: { note: "ring twice" } });
    expect(ok.state).toBe("accepted");
    expect(JSON.parse((await taskRow(t.body.id)).metafields)).toEqual({ floor: 3, note: "ring twice" });
    const bad = await command(acc.admin.token, t.body, "update", { metafields: { floor: "third" } });
    expect(bad.state).toBe("rejected");
    expect(bad.error_message).toBe('Metafield "floor": Expected an integer.');
    const unknown = await command(acc.admin.token, t.body, "update", { metafields: { nope: 1 } });
    expect(unknown.error_message).toBe('Metafield "nope": Unknown metafield.');
    expect(JSON.parse((await taskRow(t.body.id)).metafields)).toEqual({ floor: 3, note: "ring twice" });
  });

  it("reassign's task_data.metafields are checked as update's are", async () => {
    const acc = await newAccount();
    const w1 = await addUser(acc, "worker");
    const w2 = await addUser(acc, "worker");
    const other = await newAccount("Other");
    await define(acc, { key: "site", value_type: "link" });
    await define(acc, { key: "helper", value_type: "assignee" });
    const task = await insertTask(acc.account.id, { state: "assigned", assigneeId: w1.userId });
    const reassign = async (metafields: Record<string, unknown>) => {
      const r = await call("/task_commands/", {
        token: acc.admin.token,
        body: {
          task: task.url,
          external_id: ext(),
          time: new Date().toISOString(),
          action: "reassign",
          assignee: w2.user,
          task_data: { metafields },
        },
      });
      expect([200, 201], r.text).toContain(r.status);
      return r.body;
    };
    for (const [metafields, message] of [
      [{ site: "javascript:alert(1)" }, /^Metafield "site": /],
      [{ nope: 1 }, /^Metafield "nope": Unknown metafield\.$/],
      [{ helper: other.admin.user }, /^Metafield "helper": /],
    ] as const) {
      const refused = await reassign(metafields);
      expect(refused.state, JSON.stringify(metafields)).toBe("rejected");
      expect(refused.error_message).toMatch(message);
    }
    expect((await taskRow(task.id)).assignee_id).toBe(w1.userId);
    expect(JSON.parse((await taskRow(task.id)).metafields || "{}")).toEqual({});
    const ok = await reassign({ site: "https://example.org/gate", helper: w1.user });
    expect(ok.state).toBe("accepted");
    expect((await taskRow(task.id)).assignee_id).toBe(w2.userId);
  });

  it("a worker cannot touch a metafield not editable by workers", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    await define(acc, { key: "price", value_type: "number", is_editable_by_worker: false });
    await define(acc, { key: "note", value_type: "text" });
    const task = await insertTask(acc.account.id, { state: "assigned", assigneeId: worker.userId });
    const refused = await command(worker.token, task, "update", { metafields: { price: 10, note: "x" } });
    expect(refused.state).toBe("rejected");
    expect(refused.error_message).toBe('Metafield "price" is not editable.');
    expect((await command(worker.token, task, "update", { metafields: { note: "x" } })).state).toBe(
      "accepted",
    );
    expect((await command(acc.admin.token, task, "update", { metafields: { price: 10 } })).state).toBe(
      "accepted",
    );
  });

  it("complete is rejected while a required metafield is empty, even against a racing update", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    await define(acc, { key: "receipt", value_type: "string", is_required_before_complete: true });
    await define(acc, { key: "pallets", value_type: "integer", is_required_before_complete: true });
    const task = await insertTask(acc.account.id, { state: "active", assigneeId: worker.userId });
    const early = await command(worker.token, task, "complete");
    expect(early.state).toBe("rejected");
    expect(early.error_message).toBe(
      "Cannot complete the task: required metafields are not set: pallets, receipt.",
    );
    for (let round = 0; round < 4; round++) {
      const t = await insertTask(acc.account.id, { state: "active", assigneeId: worker.userId });
      await command(worker.token, t, "update", { metafields: { receipt: "R-1", pallets: 2 } });
      await Promise.all([
        command(worker.token, t, "complete"),
        command(worker.token, t, "update", { metafields: { receipt: "" } }),
      ]);
      const row = await taskRow(t.id);
      const mf = JSON.parse(row.metafields);
      // Never completed with an empty required value.
      if (row.state === "completed") expect(mf.receipt).toBe("R-1");
    }
  });

  it("source contact_address copies the value at task creation", async () => {
    const acc = await newAccount();
    await define(acc, { key: "gate", value_type: "string", source: "contact_address" });
    await call("/metafields/", {
      token: acc.admin.token,
      body: { key: "gate", applies_to: "contact_addresses", value_type: "string" },
    });
    const ca = await call("/contact_addresses/", {
      token: acc.admin.token,
      body: { address: { raw_address: "Tartu" }, metafields: { gate: "B4" } },
    });
    expectStatus(ca, 201);
    const copied = await call("/tasks/", {
      token: acc.admin.token,
      body: { account: acc.account.url, category: "drop_off", contact_address: ca.body.url },
    });
    expectStatus(copied, 201);
    expect(copied.body.metafields).toEqual({ gate: "B4" });
    const own = await call("/tasks/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        category: "drop_off",
        contact_address: ca.body.url,
        metafields: { gate: "C1" },
      },
    });
    expect(own.body.metafields).toEqual({ gate: "C1" });
  });
});

describe("GET /tasks/?metafields__<key>=", () => {
  it("filters by a value, kept current by every write path (create, PATCH, command, delete)", async () => {
    const acc = await newAccount();
    await define(acc, { key: "gate", value_type: "string" });
    await define(acc, { key: "pallets", value_type: "integer" });
    await define(acc, { key: "fragile", value_type: "boolean" });
    await define(acc, { key: "zones", value_type: "multiselect", choices: ["north", "south"] });
    const mk = async (metafields: Record<string, unknown>) =>
      (await call("/tasks/", { token: acc.admin.token, body: taskBody(acc, { metafields }) })).body;
    const a = await mk({ gate: "B4", pallets: 3, fragile: true, zones: ["north", "south"] });
    const b = await mk({ gate: "C1", pallets: 30 });
    const ids = async (query: string) =>
      (await call(`/tasks/?${query}`, { token: acc.admin.token })).body.results.map((t: any) => t.id).sort();
    expect(await ids("metafields__gate=B4")).toEqual([a.id]);
    expect(await ids("metafields__pallets=3")).toEqual([a.id]);
    expect(await ids("metafields__pallets=3.0")).toEqual([a.id]);
    expect(await ids("metafields__fragile=true")).toEqual([a.id]);
    expect(await ids("metafields__zones=south")).toEqual([a.id]);
    expect(await ids("metafields__gate=B4&metafields__pallets=30")).toEqual([]);
    expect(await ids("metafields__gate=nowhere")).toEqual([]);
    await call(`/tasks/${b.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { metafields: { gate: "B4" } },
    });
    expect(await ids("metafields__gate=B4")).toEqual([a.id, b.id].sort());
    expect(await ids("metafields__pallets=30")).toEqual([]);
    await command(acc.admin.token, a, "update", { metafields: { gate: "A1" } });
    expect(await ids("metafields__gate=B4")).toEqual([b.id]);
    expect(await ids("metafields__gate=A1")).toEqual([a.id]);
    await call(`/tasks/${a.id}/`, { method: "DELETE", token: acc.admin.token });
    expect(await ids("metafields__gate=A1")).toEqual([]);
    // Another account's equal values are not seen.
    const other = await newAccount();
    await define(other, { key: "gate", value_type: "string" });
    await call("/tasks/", {
      token: other.admin.token,
      body: taskBody(other, { metafields: { gate: "B4" } }),
    });
    expect(await ids("metafields__gate=B4")).toEqual([b.id]);
    // A misspelt parameter is still refused.
    const bad = await call("/tasks/?metafield__gate=B4", { token: acc.admin.token });
    expectStatus(bad, 400);
    expect(bad.body).toEqual({ metafield__gate: ["Unknown query parameter."] });
  });
});

describe("GET /tasks/?metafields[<key>]= (the OpenAPI deepObject spelling)", () => {
  it("filters exactly as metafields__<key>, and so do an export's filters given as an object", async () => {
    const acc = await newAccount();
    await define(acc, { key: "gate", value_type: "string" });
    await define(acc, { key: "pallets", value_type: "integer" });
    const mk = async (metafields: Record<string, unknown>) =>
      (await call("/tasks/", { token: acc.admin.token, body: taskBody(acc, { metafields }) })).body;
    const a = await mk({ gate: "B4", pallets: 3 });
    const b = await mk({ gate: "C1", pallets: 3 });
    const ids = async (query: string) => {
      const r = await call(`/tasks/?${query}`, { token: acc.admin.token });
      expectStatus(r, 200);
      return r.body.results.map((t: any) => t.id).sort();
    };
    // What openapi-fetch (and any client of the `deepObject` parameter) sends, brackets encoded or not.
    expect(await ids("metafields%5Bgate%5D=B4")).toEqual([a.id]);
    expect(await ids("metafields[gate]=C1")).toEqual([b.id]);
    expect(await ids("metafields[pallets]=3.0")).toEqual([a.id, b.id].sort());
    // Both spellings together: all must hold.
    expect(await ids("metafields[gate]=B4&metafields__pallets=3")).toEqual([a.id]);
    expect(await ids("metafields[gate]=B4&metafields__gate=C1")).toEqual([]);
    for (const bad of ["metafields[Gate]=B4", "metafields[gate=B4", "metafields=B4"]) {
      expectStatus(await call(`/tasks/?${bad}`, { token: acc.admin.token }), 400);
    }

    // Contract §21: an export's filters are the list's query parameters, the object form included.
    const post = (filters: Record<string, unknown>) =>
      call("/task_exports/", {
        token: acc.admin.token,
        body: { account: acc.account.url, fields: ["id"], filters, format: "jsonl" },
      });
    const created = await post({ metafields: { gate: "B4", pallets: 3 } });
    expectStatus(created, 202);
    expect(created.body.filters).toEqual({ metafields__gate: "B4", metafields__pallets: "3" });
    const done = await finished(acc, created.body.url);
    expect(done.state).toBe("completed");
    const file = await call(done.file);
    expect(
      file.text
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).id),
    ).toEqual([a.id]);
    expectStatus(await post({ "metafields[gate]": "C1" }), 202);
    const refused = await post({ metafields: { gate: { nested: true } } });
    expectStatus(refused, 400);
    expect(refused.body).toEqual({
      filters: { "metafields[gate]": ["Must be a string, number or boolean."] },
    });
  });
});
