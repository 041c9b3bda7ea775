import { describe, expect, it } from "vitest";
import { addUser, expectStatus, newAccount, type TestAccount } from "../helpers";
import { stored } from "../stored";
import { api, createTask, ids, listAll } from "./helpers";

const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

async function setup() {
  const acc = await newAccount();
  const w1 = await addUser(acc, "worker", "w1");
  const ca = await api("/contact_addresses/", {
    token: acc.admin.token,
    body: { external_id: "ca-1", address: { raw_address: "Pärnu, Estonia" } },
  });
  expectStatus(ca, 201);
  const t1 = await createTask(acc, {
    category: "drop_off",
    complete_after: "2030-01-01T10:00:00Z",
    complete_before: "2030-01-01T12:00:00Z",
    position: 1,
  });
  const t2 = await createTask(acc, {
    category: "pick_up",
    assignee: w1.user,
    complete_after: "2030-01-02T10:00:00Z",
    complete_before: "2030-01-02T12:00:00Z",
    position: 0.5,
  });
  const t3 = await createTask(acc, {
    category: "service",
    state: "draft",
    complete_after: null,
    complete_before: null,
    address: { raw_address: "Qwxzvbn Plkjh 99999" },
  });
  const order = await api("/orders/", {
    token: acc.admin.token,
    body: {
      account: acc.account.url,
      tasks_data: [{ category: "drop_off", contact_address: ca.body.url, description: "from order" }],
    },
  });
  expectStatus(order, 201);
  const t4 = (await api(order.body.tasks[0], { token: acc.admin.token })).body;
  const t5 = await createTask(acc, { complete_after: null, complete_before: null });
  const importId = crypto.randomUUID();
  await stored.prepare("UPDATE tasks SET task_import_id = ? WHERE id = ?").bind(importId, t5.id).run();
  return { acc, w1, ca: ca.body, order: order.body, t1, t2, t3, t4, t5, importId };
}

async function found(acc: TestAccount, params: Record<string, string>) {
  const r = await api(`/tasks/?${q(params)}`, { token: acc.admin.token });
  expectStatus(r, 200);
  return ids(r.body.results).sort();
}

describe("GET /tasks/ filters (interface §4.6)", () => {
  it("filters by state, assignee, category, window, order, contact address and import", async () => {
    const s = await setup();
    const { acc, t1, t2, t3, t4, t5 } = s;
    const sorted = (...tasks: { id: string }[]) => ids(tasks).sort();
    expect(await found(acc, {})).toEqual(sorted(t1, t2, t3, t4, t5));
    expect(await found(acc, { state: "draft" })).toEqual(sorted(t3));
    expect(await found(acc, { state: "assigned,draft" })).toEqual(sorted(t2, t3));
    expect(await found(acc, { assignee: s.w1.user })).toEqual(sorted(t2));
    expect(await found(acc, { assignee: s.w1.userId })).toEqual(sorted(t2));
    expect(await found(acc, { category: "pick_up" })).toEqual(sorted(t2));
    expect(await found(acc, { category: "service,pick_up" })).toEqual(sorted(t2, t3));
    expect(await found(acc, { complete_after__gte: "2030-01-02T00:00:00Z" })).toEqual(sorted(t2));
    expect(await found(acc, { complete_before__lte: "2030-01-01T12:00:00Z" })).toEqual(sorted(t1));
    expect(await found(acc, { complete_before__lte: "2030-01-01T14:00:00+02:00" })).toEqual(sorted(t1));
    expect(await found(acc, { order: s.order.url })).toEqual(sorted(t4));
    expect(await found(acc, { contact_address: s.ca.url })).toEqual(sorted(t4));
    expect(await found(acc, { contact_address__external_id: "ca-1" })).toEqual(sorted(t4));
    expect(await found(acc, { task_import: s.importId })).toEqual(sorted(t5));
  });

  it("filters by the geocoding outcome times", async () => {
    const { acc, ca, t1, t2, t3, t4, t5 } = await setup();
    const sorted = (...tasks: { id: string }[]) => ids(tasks).sort();
    const geocoded = sorted(t1, t2, t4, t5);
    // t4 copied its address, geocoding times included, from the contact address.
    expect(t4.address.geocoded_at).toBe(ca.address.geocoded_at);
    expect(await found(acc, { address__geocode_failed_at__isnull: "false" })).toEqual(sorted(t3));
    expect(await found(acc, { address__geocoded_at__isnull: "true" })).toEqual(sorted(t3));
    expect(await found(acc, { address__geocoded_at__isnull: "false" })).toEqual(geocoded);
    expect(await found(acc, { address__geocoded_at__gte: ca.address.geocoded_at })).toEqual(geocoded);
    expect(await found(acc, { address__geocoded_at__lte: t1.created_at })).toContain(t1.id);
    expect(await found(acc, { address__geocoded_at__lte: "2020-01-01T00:00:00Z" })).toEqual([]);
    expect(await found(acc, { address__geocoded_at: t2.address.geocoded_at })).toContain(t2.id);
    expect(await found(acc, { address__geocode_failed_at__gte: t3.address.geocode_failed_at })).toEqual(
      sorted(t3),
    );
    expect(await found(acc, { address__geocode_failed_at__lte: "2020-01-01T00:00:00Z" })).toEqual([]);
    expect(await found(acc, { address__geocode_failed_at: t3.address.geocode_failed_at })).toEqual(
      sorted(t3),
    );
  });

  it("filters by update time, and leaves out what is younger than the settle delay", async () => {
    const { acc, t1, t5 } = await setup();
    await new Promise((r) => setTimeout(r, 5));
    const patched = await api(t1.url, {
      method: "PATCH",
      token: acc.admin.token,
      body: { description: "later" },
    });
    expectStatus(patched, 200);
    expect(await found(acc, { updated_at__gt: t5.updated_at })).toEqual([t1.id]);
    expect(await found(acc, { updated_at__gte: patched.body.updated_at })).toEqual([t1.id]);
    expect(await found(acc, { updated_at__gt: patched.body.updated_at })).toEqual([]);
    // Everything was written just now: within UPDATED_AT_SETTLE_SECONDS (5 s) nothing is settled.
    expect(await found(acc, { updated_at_delay_latest: "true" })).toEqual([]);
    await stored.prepare("UPDATE tasks SET updated_at = updated_at - 10000 WHERE id = ?").bind(t5.id).run();
    expect(await found(acc, { updated_at_delay_latest: "true" })).toEqual([t5.id]);
    expect((await found(acc, { updated_at_delay_latest: "false" })).length).toBe(5);
  });

  it("answers 400 naming unknown parameters and bad values", async () => {
    const acc = await newAccount();
    const unknown = await api("/tasks/?colour=red&state=assigned", { token: acc.admin.token });
    expectStatus(unknown, 400);
    expect(unknown.body).toEqual({ colour: ["Unknown query parameter."] });
    const bad = await api(
      `/tasks/?${q({ state: "done", ordering: "name", complete_after__gte: "soon", assignee: "x", expand: "documents" })}`,
      { token: acc.admin.token },
    );
    expectStatus(bad, 400);
    expect(Object.keys(bad.body).sort()).toEqual([
      "assignee",
      "complete_after__gte",
      "expand",
      "ordering",
      "state",
    ]);
  });

  it("expands routes on request (an empty list until routes exist)", async () => {
    const acc = await newAccount();
    await createTask(acc);
    const plain = await api("/tasks/", { token: acc.admin.token });
    expect(plain.body.results[0]).not.toHaveProperty("routes");
    const expanded = await api("/tasks/?expand=routes", { token: acc.admin.token });
    expect(expanded.body.results[0].routes).toEqual([]);
  });
});

describe("GET /tasks/ visibility", () => {
  it("shows a worker only its own tasks; others' are 404", async () => {
    const acc = await newAccount();
    const w1 = await addUser(acc, "worker", "w1");
    const w2 = await addUser(acc, "worker", "w2");
    const mine = await createTask(acc, { assignee: w1.user });
    const theirs = await createTask(acc, { assignee: w2.user });
    const pool = await createTask(acc);
    expect(ids(await listAll("/tasks/", w1.token))).toEqual([mine.id]);
    expect(ids(await listAll(`/tasks/?assignee=${w2.user}`, w1.token))).toEqual([]);
    expectStatus(await api(mine.url, { token: w1.token }), 200);
    expectStatus(await api(theirs.url, { token: w1.token }), 404);
    expectStatus(await api(pool.url, { token: w1.token }), 404);
    expect(ids(await listAll("/tasks/", acc.admin.token)).sort()).toEqual(ids([mine, theirs, pool]).sort());
  });

  it("hides another account's tasks: 404 on read, absent from lists", async () => {
    const acc = await newAccount();
    const other = await newAccount();
    const theirs = await createTask(other);
    expectStatus(await api(theirs.url, { token: acc.admin.token }), 404);
    expect(await listAll("/tasks/", acc.admin.token)).toEqual([]);
  });
});

describe("GET /tasks/ ordering (contract §4)", () => {
  it("orders by each field both ways; tasks without a value come last either way", async () => {
    const acc = await newAccount();
    const mk = (after: string | null, position: number | null) =>
      createTask(acc, {
        complete_after: after,
        complete_before: after ? "2031-01-01T00:00:00Z" : null,
        position,
      });
    const a = await mk("2030-03-01T00:00:00Z", 2);
    const b = await mk(null, null);
    const c = await mk("2030-01-01T00:00:00Z", 1);
    const d = await mk("2030-02-01T00:00:00Z", null);
    const e = await mk(null, 0.5);
    // Updates in a known order: e, then a.
    for (const t of [e, a]) {
      await new Promise((r) => setTimeout(r, 3));
      expectStatus(
        await api(t.url, { method: "PATCH", token: acc.admin.token, body: { description: "u" } }),
        200,
      );
    }
    const order = async (ordering: string) =>
      ids(await listAll(`/tasks/?ordering=${ordering}&page_size=2`, acc.admin.token));
    expect(await order("created_at")).toEqual(ids([a, b, c, d, e]));
    expect(await order("-created_at")).toEqual(ids([e, d, c, b, a]));
    expect(await order("updated_at")).toEqual(ids([b, c, d, e, a]));
    expect(await order("-updated_at")).toEqual(ids([a, e, d, c, b]));
    expect(await order("complete_after")).toEqual(ids([c, d, a, b, e]));
    expect(await order("-complete_after")).toEqual(ids([a, d, c, e, b]));
    expect(await order("complete_before")).toEqual(ids([a, c, d, b, e]));
    expect(await order("-complete_before")).toEqual(ids([d, c, a, e, b]));
    expect(await order("position")).toEqual(ids([e, c, a, b, d]));
    expect(await order("-position")).toEqual(ids([a, c, e, d, b]));
  });
});

describe("GET /tasks/ cursor pagination (contract §4)", () => {
  for (const ordering of ["created_at", "-created_at", "complete_after", "-position"]) {
    it(`never loses or repeats a task while tasks are inserted between pages (ordering=${ordering})`, async () => {
      const acc = await newAccount();
      const windows = [
        "2030-01-05T00:00:00Z",
        null,
        "2030-01-01T00:00:00Z",
        "2030-01-03T00:00:00Z",
        null,
        "2030-01-04T00:00:00Z",
        "2030-01-02T00:00:00Z",
      ];
      const initial: string[] = [];
      for (const [i, w] of windows.entries()) {
        const t = await createTask(acc, {
          complete_after: w,
          complete_before: null,
          position: i % 3 === 0 ? null : i,
        });
        initial.push(t.id);
      }
      const seen: string[] = [];
      let url: string | null = `/tasks/?ordering=${ordering}&page_size=2`;
      let pages = 0;
      while (url) {
        const r = await api(url, { token: acc.admin.token });
        expectStatus(r, 200);
        seen.push(...ids(r.body.results));
        url = r.body.next;
        // New tasks land before and after the cursor, with and without sort values.
        if (pages++ < 3) {
          await createTask(acc, {
            complete_after: "2029-12-31T00:00:00Z",
            complete_before: null,
            position: -1,
          });
          await createTask(acc, { complete_after: null, complete_before: null, position: null });
        }
      }
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of initial) expect(seen).toContain(id);
    });
  }

  it("walks back with `previous` to the same pages, across the null range", async () => {
    const acc = await newAccount();
    for (const w of ["2030-01-02T00:00:00Z", null, "2030-01-01T00:00:00Z", null, "2030-01-03T00:00:00Z"]) {
      await createTask(acc, { complete_after: w, complete_before: null });
    }
    const pages: string[][] = [];
    const links: any[] = [];
    let url: string | null = "/tasks/?ordering=complete_after&page_size=2";
    while (url) {
      const r = await api(url, { token: acc.admin.token });
      expectStatus(r, 200);
      pages.push(ids(r.body.results));
      links.push(r.body);
      url = r.body.next;
    }
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(links[0].previous).toBeNull();
    for (let i = pages.length - 1; i > 0; i--) {
      const back = await api(links[i].previous, { token: acc.admin.token });
      expectStatus(back, 200);
      expect(ids(back.body.results)).toEqual(pages[i - 1]);
    }
    expectStatus(await api("/tasks/?cursor=bm9wZQ", { token: acc.admin.token }), 400);
  });
});
