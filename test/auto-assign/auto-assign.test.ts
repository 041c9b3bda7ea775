import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { autoAssign as autoAssignService, newDayCache } from "../../src/services/auto-assign";
import { cronAutoAssign } from "../../src/services/positions/cron";
import {
  type Actor,
  addUser,
  call,
  defineMetafields,
  expectStatus,
  newAccount,
  storedEvents,
  type TestAccount,
} from "../helpers";
import { stored } from "../stored";

const HOUR = 3_600_000;
const at = (ms: number) => new Date(ms).toISOString();
const point = (lon: number, lat: number) => ({ type: "Point", coordinates: [lon, lat] });
const idOf = (url: string) => url.split("/").filter(Boolean).pop()!;

/**
 * An account whose local time is about midday whenever the test runs (a fixed UTC offset picked
 * from the hour), with a shift of the whole day: "today" and its windows never straddle midnight.
 */
async function middayAccount() {
  const acc = await newAccount();
  const offset = 12 - new Date().getUTCHours();
  // POSIX sign: Etc/GMT-5 is five hours ahead of UTC.
  const zone = offset === 0 ? "Etc/UTC" : `Etc/GMT${offset > 0 ? "-" : "+"}${Math.abs(offset)}`;
  const r = await call(`/accounts/${acc.account.id}/`, {
    method: "PATCH",
    token: acc.admin.token,
    body: { timezone: zone, optimize_earliest_start: "00:00:00", optimize_latest_end: "23:59:00" },
  });
  expectStatus(r, 200);
  const today = new Intl.DateTimeFormat("en-CA", { timeZone: zone }).format(Date.now());
  return { acc, today };
}

async function onDuty(worker: Actor) {
  const me = await call("/users/me/", { token: worker.token });
  const r = await call(`/account_roles/${idOf(me.body.account_role)}/`, {
    method: "PATCH",
    token: worker.token,
    body: { on_duty: true },
  });
  expectStatus(r, 200);
  return idOf(me.body.account_role);
}

type Stop = { lon: number; lat?: number; window?: [number, number]; demand?: number };

async function task(acc: TestAccount, s: Stop, extra: Record<string, unknown> = {}) {
  const now = Date.now();
  const [after, before] = s.window ?? [now - HOUR, now + 6 * HOUR];
  const t = await call("/tasks/", {
    token: acc.admin.token,
    body: {
      account: acc.account.url,
      category: "drop_off",
      address: { raw_address: `${s.lon}`, location: point(s.lon, s.lat ?? 60.17) },
      complete_after: at(after),
      complete_before: at(before),
      duration: "00:05:00",
      ...(s.demand !== undefined ? { metafields: { demand: s.demand } } : {}),
      ...extra,
    },
  });
  expectStatus(t, 201);
  return t.body;
}

/** A worker on duty with a route today through `stops` (positions 1, 2, …). */
async function workerWithRoute(acc: TestAccount, today: string, name: string, stops: Stop[]) {
  const worker = await addUser(acc, "worker", name);
  await onDuty(worker);
  const route = await call("/routes/", {
    token: acc.admin.token,
    body: { name, assignee: worker.user, date: today },
  });
  expectStatus(route, 201);
  const tasks = [];
  for (const [i, s] of stops.entries())
    tasks.push(await task(acc, s, { assignee: worker.user, route: route.body.url, position: i + 1 }));
  return { worker, route: route.body, tasks };
}

const autoAssign = (acc: TestAccount, body: unknown, token = acc.admin.token) =>
  call("/tasks/auto_assign/", { token, body });

describe("auto-assign (contract §29)", () => {
  it("places a task on the route where it adds the least travel, between its neighbours, by a system assign", async () => {
    const { acc, today } = await middayAccount();
    const near = await workerWithRoute(acc, today, "Aino", [{ lon: 24.9 }, { lon: 25.0 }]);
    await workerWithRoute(acc, today, "Bertil", [{ lon: 26.5 }, { lon: 26.6 }]);
    const fresh = await task(acc, { lon: 24.95 });
    const r = await autoAssign(acc, { tasks: [fresh.url] });
    expectStatus(r, 200);
    expect(r.body).toEqual([
      { task: fresh.url, assignee: near.worker.user, route: near.route.url, position: 1.5, reason: null },
    ]);
    const after = await call(`/tasks/${fresh.id}/`, { token: acc.admin.token });
    expect(after.body).toMatchObject({
      state: "assigned",
      assignee: near.worker.user,
      route: near.route.url,
      position: 1.5,
    });
    const cmds = await call(`/task_commands/?task=${fresh.id}`, { token: acc.admin.token });
    expect(cmds.body.results).toEqual([
      expect.objectContaining({ action: "assign", user: null, notes: "auto_assign", state: "accepted" }),
    ]);
    // Answered as it stands when asked again: nothing applied twice.
    const again = await autoAssign(acc, { tasks: [fresh.url] });
    expect(again.body).toEqual(r.body);
    expect(
      (await call(`/task_commands/?task=${fresh.id}`, { token: acc.admin.token })).body.results,
    ).toHaveLength(1);
  });

  it("a worker on duty without a route today gets one; off-duty workers get nothing", async () => {
    const { acc, today } = await middayAccount();
    await addUser(acc, "worker", "Off");
    const worker = await addUser(acc, "worker", "Cecilia");
    await onDuty(worker);
    const fresh = await task(acc, { lon: 24.95 });
    const r = await autoAssign(acc, { tasks: [fresh.url] });
    expectStatus(r, 200);
    expect(r.body[0]).toMatchObject({ assignee: worker.user, position: 1, reason: null });
    const route = await call(`/routes/${idOf(r.body[0].route)}/`, { token: acc.admin.token });
    expect(route.body).toMatchObject({ assignee: worker.user, date: today });
  });

  it("nothing fits: unassigned, §16's reason, and task.auto_assign_failed", async () => {
    const { acc, today } = await middayAccount();
    await workerWithRoute(acc, today, "Aino", [{ lon: 24.9 }]);
    const now = Date.now();
    // A window that closed an hour ago: no route can reach it in time.
    const gone = await task(acc, { lon: 24.95, window: [now - 3 * HOUR, now - HOUR] });
    const r = await autoAssign(acc, { tasks: [gone.url] });
    expect(r.body).toEqual([
      { task: gone.url, assignee: null, route: null, position: null, reason: "time_window" },
    ]);
    expect((await call(`/tasks/${gone.id}/`, { token: acc.admin.token })).body.state).toBe("unassigned");
    const events = (await storedEvents({ accountId: acc.account.id })).filter(
      (e) => e.type === "task.auto_assign_failed",
    );
    expect(events.map((e) => e.data)).toEqual([{ task: gone.url, reason: "time_window" }]);
  });

  it("two tasks at once never both take the last room of one route", async () => {
    const { acc, today } = await middayAccount();
    await defineMetafields(acc, "tasks", { demand: "integer" });
    const { worker } = await workerWithRoute(acc, today, "Aino", [{ lon: 24.9, demand: 1 }]);
    const me = await call("/users/me/", { token: worker.token });
    expectStatus(
      await call(`/account_roles/${idOf(me.body.account_role)}/`, {
        method: "PATCH",
        token: acc.admin.token,
        body: { vehicle_capacity: [2] },
      }),
      200,
    );
    const a = await task(acc, { lon: 24.95, demand: 1 });
    const b = await task(acc, { lon: 24.96, demand: 1 });
    const [ra, rb] = await Promise.all([
      autoAssign(acc, { tasks: [a.url] }),
      autoAssign(acc, { tasks: [b.url] }),
    ]);
    const results = [...ra.body, ...rb.body];
    expect(results.filter((x: any) => x.assignee === worker.user)).toHaveLength(1);
    expect(results.filter((x: any) => x.reason === "shift")).toHaveLength(1);
    const held = await call(`/tasks/?assignee=${worker.userId}&state=assigned`, {
      token: acc.admin.token,
    });
    expect(held.body.results).toHaveLength(2);
  });

  it("sees a route's change made between two insertions (its read of the day is not stale)", async () => {
    const { acc, today } = await middayAccount();
    await defineMetafields(acc, "tasks", { demand: "integer" });
    const { worker } = await workerWithRoute(acc, today, "Aino", [{ lon: 24.9, demand: 1 }]);
    const me = await call("/users/me/", { token: worker.token });
    await call(`/account_roles/${idOf(me.body.account_role)}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { vehicle_capacity: [2] },
    });
    const a = await task(acc, { lon: 24.95, demand: 1 });
    const b = await task(acc, { lon: 24.96, demand: 1 });
    expect((await autoAssign(acc, { tasks: [a.url] })).body[0].assignee).toBe(worker.user);
    // Full now; the dispatcher takes `a` off the route: the room is there again.
    expect((await autoAssign(acc, { tasks: [b.url] })).body[0].reason).toBe("shift");
    const off = await call("/task_commands/", {
      token: acc.admin.token,
      body: { task: a.url, external_id: `off-${a.id}`, time: at(Date.now()), action: "unassign" },
    });
    expectStatus(off, 201);
    const again = await autoAssign(acc, { tasks: [b.url] });
    expect(again.body[0].assignee).toBe(worker.user);
  });

  it("starts a route at the worker's fresh position (one sent a moment ago too), else at the route's start; an order's two halves go on one route, pick-up first", async () => {
    const { acc, today } = await middayAccount();
    // Two routes that start far east; Bertil has sent where he is (near the new task).
    const far = { raw_address: "Depot", location: point(26.0, 60.17) };
    const workers = [];
    for (const name of ["Aino", "Bertil"]) {
      const worker = await addUser(acc, "worker", name);
      await onDuty(worker);
      const route = await call("/routes/", {
        token: acc.admin.token,
        body: { name, assignee: worker.user, date: today, start_address: far, end_address: far },
      });
      expectStatus(route, 201);
      await task(acc, { lon: 25.9 }, { assignee: worker.user, route: route.body.url, position: 1 });
      workers.push({ worker, route: route.body });
    }
    const [aino, bertil] = workers;
    const fresh = await task(acc, { lon: 24.95 });
    // Without positions the two routes tie and the first (by name) takes it.
    const tie = await task(acc, { lon: 25.95 });
    expect((await autoAssign(acc, { tasks: [tie.url] })).body[0].assignee).toBe(aino.worker.user);
    // Bertil sends where he is, near the new task, and auto-assign runs right after: the account's
    // stream object, which runs it, holds that position before its copy reaches D1 (its alarm,
    // within a second), and it decides.
    const sent = await call("/positions/", {
      token: bertil.worker.token,
      body: { location: point(24.95, 60.17), time: at(Date.now() - 1000), accuracy_m: 5 },
    });
    expectStatus(sent, 202);
    const r = await autoAssign(acc, { tasks: [fresh.url] });
    // From Bertil's position, before the stop near the depot, he adds the least travel.
    expect(r.body).toEqual([
      { task: fresh.url, assignee: bertil.worker.user, route: bertil.route.url, position: 0, reason: null },
    ]);

    // An order's pick-up (east) and drop-off (west), both waiting: one route, pick-up first.
    const now = Date.now();
    const half = (category: string, lon: number) => ({
      category,
      address: { raw_address: `${lon}`, location: point(lon, 60.17) },
      complete_after: at(now - HOUR),
      complete_before: at(now + 6 * HOUR),
      duration: "00:05:00",
    });
    const order = await call("/orders/", {
      token: acc.admin.token,
      body: { account: acc.account.url, tasks_data: [half("drop_off", 25.5), half("pick_up", 25.8)] },
    });
    expectStatus(order, 201);
    const [down, up] = order.body.tasks;
    const pair = await autoAssign(acc, { tasks: [down, up] });
    expectStatus(pair, 200);
    const [d, u] = pair.body;
    expect(u.assignee).not.toBeNull();
    expect(d).toMatchObject({ assignee: u.assignee, route: u.route, reason: null });
    expect(u.position).toBeLessThan(d.position);
  });

  it("after its own insertion, its kept read of the route has the route's fingerprint as stored: nothing is read again", async () => {
    const { acc, today } = await middayAccount();
    const { route } = await workerWithRoute(acc, today, "Aino", [
      { lon: 24.9 },
      { lon: 25.0 },
      { lon: 25.1 },
    ]);
    const cache = newDayCache();
    for (const lon of [24.95, 25.05, 24.92]) {
      const t = await task(acc, { lon });
      const [r] = (await autoAssignService(env, acc.account.id, [t.id], "https://api.test", {
        cache,
        latest: () => new Map(),
      })) as {
        routeId: string | null;
      }[];
      expect(r.routeId).toBe(route.id);
      const sql = await stored
        .prepare(
          "SELECT count(*) || ':' || sum(version) || ':' || max(updated_at) AS key FROM tasks WHERE account_id = ? AND route_id = ?",
        )
        .bind(acc.account.id, route.id)
        .first<{ key: string }>();
      expect(cache.routes.get(route.id)?.key).toBe(sql?.key);
      // In the route's order, the new task among them.
      expect(cache.routes.get(route.id)?.rows.map((x) => x.position)).toEqual(
        [...cache.routes.get(route.id)!.rows.map((x) => x.position)].sort((a, b) => a! - b!),
      );
      expect(cache.routes.get(route.id)?.rows.some((x) => x.id === t.id && x.state === "assigned")).toBe(
        true,
      );
    }
  });

  it("a day: its unassigned tasks by window start; bad input is 400 and places nothing", async () => {
    const { acc, today } = await middayAccount();
    const { worker } = await workerWithRoute(acc, today, "Aino", []);
    const now = Date.now();
    const late = await task(acc, { lon: 24.95, window: [now + 2 * HOUR, now + 5 * HOUR] });
    const early = await task(acc, { lon: 24.96, window: [now, now + 5 * HOUR] });
    expectStatus(await autoAssign(acc, {}), 400);
    expectStatus(await autoAssign(acc, { day: today, tasks: [early.url] }), 400);
    const bad = await autoAssign(acc, { tasks: [early.url, "https://example.com/nope/"] });
    expectStatus(bad, 400);
    expect(bad.body.tasks).toEqual({ 1: ["Invalid hyperlink - No URL match."] });
    expect((await call(`/tasks/${early.id}/`, { token: acc.admin.token })).body.state).toBe("unassigned");
    expectStatus(await autoAssign(acc, { day: today }, worker.token), 403);
    const r = await autoAssign(acc, { day: today });
    expectStatus(r, 200);
    expect(r.body.map((x: any) => x.task)).toEqual([early.url, late.url]);
    expect(r.body.every((x: any) => x.assignee === worker.user)).toBe(true);
  });

  it("with auto_assign insert, a task created unassigned is placed within seconds; off, it waits", async () => {
    const { acc, today } = await middayAccount();
    const near = await workerWithRoute(acc, today, "Aino", [{ lon: 24.9 }]);
    const waits = await task(acc, { lon: 24.95 });
    const patch = await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { auto_assign: "insert" },
    });
    expect(patch.body.auto_assign).toBe("insert");
    // Through the Worker's own fetch (its execution context runs the after-write work).
    const created = await exports.default.fetch(
      new Request("http://localhost/tasks/", {
        method: "POST",
        headers: { Authorization: `Bearer ${acc.admin.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({
          account: acc.account.url,
          category: "drop_off",
          address: { raw_address: "x", location: point(24.96, 60.17) },
          complete_after: at(Date.now()),
          complete_before: at(Date.now() + 5 * HOUR),
        }),
      }),
    );
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { id: string }).id;
    let state = "unassigned";
    for (let i = 0; i < 50 && state === "unassigned"; i++) {
      await new Promise((res) => setTimeout(res, 100));
      state = (await call(`/tasks/${id}/`, { token: acc.admin.token })).body.state;
    }
    expect(state).toBe("assigned");
    expect((await call(`/tasks/${id}/`, { token: acc.admin.token })).body.assignee).toBe(near.worker.user);
    // The one created before the setting waits: only tasks that become unassigned are placed.
    await cronAutoAssign(env);
    expect((await call(`/tasks/${waits.id}/`, { token: acc.admin.token })).body.state).toBe("unassigned");
  });
});
