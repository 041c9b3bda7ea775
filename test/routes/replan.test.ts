import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { streamOf } from "../../src/services/live";
import { dayIn } from "../../src/services/route-optimizations/build";
import { OfflineMatrix, type Point } from "../../src/services/routing";
import { type Actor, addUser, call, expectStatus, newAccount, type TestAccount } from "../helpers";

// Re-planning from now and keeping assignees (contract §29), through the API and the queue.

// Points around Tallinn (lon, lat), a few kilometres apart.
const DEPOT: Point = [24.75, 59.44];
const FAR_DEPOT: Point = [24.95, 59.44];
const STOPS: Point[] = [
  [24.7, 59.43],
  [24.8, 59.45],
  [24.72, 59.46],
  [24.78, 59.41],
  [24.66, 59.44],
  [24.83, 59.43],
  [24.74, 59.42],
];
const at = (p: Point) => ({ raw_address: `${p[1]},${p[0]}`, location: { type: "Point", coordinates: p } });
const HOUR = 3_600_000;

/** The offline matrix's leg between two points (the service's travel model in the tests). */
async function leg(a: Point, b: Point) {
  const g = await new OfflineMatrix(40).grid([a, b]);
  return { distance: g.distances[1], duration: g.durations[1] };
}

/**
 * The account's clock set so that it is near noon there whatever the hour in UTC (an `Etc/GMT`
 * zone), with the day's shift from `start` to 23:59:59: "today" has hours on both sides of now.
 */
async function noonAccount(start = "00:00:00") {
  const acc = await newAccount();
  const offset = 12 - new Date().getUTCHours();
  // Etc/GMT's sign is POSIX's: Etc/GMT-3 is three hours ahead of UTC.
  const timezone = offset === 0 ? "UTC" : offset > 0 ? `Etc/GMT-${offset}` : `Etc/GMT+${-offset}`;
  const r = await call(`/accounts/${acc.account.id}/`, {
    method: "PATCH",
    token: acc.admin.token,
    body: {
      timezone,
      optimize_earliest_start: start,
      optimize_latest_end: "23:59:59",
      transit_active_limit: null,
    },
  });
  expectStatus(r, 200);
  return { acc, offset, today: dayIn(Date.now(), timezone) };
}

async function worker(acc: TestAccount, depot: Point = DEPOT) {
  const w = await addUser(acc, "worker");
  const me = await call("/users/me/", { token: w.token });
  const roleId = me.body.account_role.split("/").filter(Boolean).pop();
  const r = await call(`/account_roles/${roleId}/`, {
    method: "PATCH",
    token: acc.admin.token,
    body: { start_address: at(depot), end_address: at(depot) },
  });
  expectStatus(r, 200);
  return { ...w, roleId };
}

async function route(acc: TestAccount, assignee: Actor, date: string) {
  const r = await call("/routes/", {
    token: acc.admin.token,
    body: { name: "Day", assignee: assignee.user, date },
  });
  expectStatus(r, 201);
  return r.body;
}

async function task(acc: TestAccount, p: Point, extra: Record<string, unknown> = {}) {
  const t = await call("/tasks/", {
    token: acc.admin.token,
    body: { account: acc.account.url, category: "drop_off", address: at(p), duration: "00:10:00", ...extra },
  });
  expectStatus(t, 201);
  return t.body;
}

async function command(
  acc: TestAccount,
  t: { url: string },
  action: string,
  extra: Record<string, unknown> = {},
) {
  const r = await call("/task_commands/", {
    token: acc.admin.token,
    body: {
      task: t.url,
      external_id: `c-${crypto.randomUUID()}`,
      time: new Date().toISOString(),
      action,
      ...extra,
    },
  });
  expectStatus(r, 201);
  expect(r.body.state, r.body.error_message).toBe("accepted");
}

/** A worker's position at `time`, stored and copied to D1 (the stream object's alarm, run now). */
async function position(acc: TestAccount, w: Actor & { roleId: string }, p: Point, time: number) {
  await call(`/account_roles/${w.roleId}/`, { method: "PATCH", token: w.token, body: { on_duty: true } });
  const r = await call("/positions/", {
    token: w.token,
    body: { location: { type: "Point", coordinates: p }, time: new Date(time).toISOString() },
  });
  expectStatus(r, 202);
  expect(r.body.stored).toBe(1);
  await runDurableObjectAlarm(streamOf(env, acc.account.id));
}

async function optimize(acc: TestAccount, body: Record<string, unknown>) {
  const r = await call("/route_optimizations/", { token: acc.admin.token, body });
  expectStatus(r, 202);
  for (let i = 0; i < 100; i++) {
    const o = await call(`/route_optimizations/${r.body.id}/`, { token: acc.admin.token });
    if (o.body.state === "completed" || o.body.state === "failed") {
      expect(o.body.state, o.body.error_message).toBe("completed");
      return o.body;
    }
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error("the optimization did not finish");
}

const urls = (xs: { url: string }[]) => xs.map((x) => x.url);

describe("route optimization from now (contract §29)", () => {
  it("keeps finished tasks in front, the active task first and the one in transit next, from the worker's fresh position; no arrival before now", async () => {
    const { acc, today } = await noonAccount();
    const w = await worker(acc);
    const r = await route(acc, w, today);
    const t = [];
    for (const [i, p] of STOPS.slice(0, 6).entries())
      t.push(await task(acc, p, { assignee: w.user, route: r.url, position: i + 1 }));
    const extra = await task(acc, STOPS[6]);
    // Done: t0 and t1 completed, t2 cancelled. Under way: t4 active, t5 in transit. t3 waits.
    for (const x of [t[0], t[1]]) {
      await command(acc, x, "transit");
      await command(acc, x, "complete");
    }
    await command(acc, t[2], "cancel");
    await command(acc, t[4], "activate");
    await command(acc, t[5], "transit");
    // The worker is at t4's stop now.
    await position(acc, w, STOPS[4], Date.now() - 60_000);
    const asked = Date.now();
    const done = await optimize(acc, { routes: [r.url], tasks: [extra.url], from_now: true });
    expect(done).toMatchObject({ from_now: true, reassign: true });
    const stops = done.result.routes[0].stops;
    expect(stops.slice(0, 2).map((s: any) => s.task)).toEqual([t[4].url, t[5].url]);
    expect(stops.map((s: any) => s.task).sort()).toEqual(urls([t[3], t[4], t[5], extra]).sort());
    // From where the worker is: the leg to its active stop is nil.
    expect(stops[0].distance_m).toBe(0);
    expect(stops[1].distance_m).toBeCloseTo((await leg(STOPS[4], STOPS[5])).distance, 0);
    for (const s of stops) expect(Date.parse(s.arrival)).toBeGreaterThanOrEqual(asked - 1000);
    // Before: the route as it stood (the stops under way first, then by position), same model.
    const before = done.result.before;
    expect(before.routes).toHaveLength(1);
    expect(before.routes[0]).toMatchObject({ route: r.url, tasks: urls([t[4], t[5], t[3]]) });
    expect(before.routes[0].distance_m).toBeGreaterThan(0);
    expect(before.distance_m).toBe(before.routes[0].distance_m);
    expect(before.duration_s).toBe(before.routes[0].duration_s);
    // Applied: the finished tasks keep positions 1–3 at the front; the plan follows from 4.
    const read = await call(`/routes/${r.id}/`, { token: acc.admin.token });
    expect(read.body.tasks).toEqual([...urls([t[0], t[1], t[2]]), ...stops.map((s: any) => s.task)]);
    for (const [i, s] of stops.entries()) {
      const x = await call(s.task.replace("https://api.test", ""), { token: acc.admin.token });
      expect(x.body.position).toBe(4 + i);
      expect(x.body.assignee).toBe(w.user);
    }
    expect((await call(`/tasks/${t[0].id}/`, { token: acc.admin.token })).body.position).toBe(1);
  });

  it("starts at the last finished stop when the position is stale, else at the start address, at the later of now and the shift's start", async () => {
    // The shift starts at 14:00 where it is noon: after now.
    const { acc, offset, today } = await noonAccount("14:00:00");
    const shiftStart = Date.parse(`${today}T14:00:00Z`) - offset * HOUR;
    expect(shiftStart).toBeGreaterThan(Date.now());
    const a = await worker(acc);
    const b = await worker(acc);
    const ra = await route(acc, a, today);
    const rb = await route(acc, b, today);
    const ta: { url: string; id: string }[] = [];
    for (const [i, p] of STOPS.slice(0, 4).entries())
      ta.push(await task(acc, p, { assignee: a.user, route: ra.url, position: i + 1 }));
    const tb = await task(acc, STOPS[5], { assignee: b.user, route: rb.url, position: 1 });
    // a finished t0 then t1: the last finished stop is t1's. Its position is 20 minutes old.
    for (const x of [ta[0], ta[1]]) {
      await command(acc, x, "transit");
      await command(acc, x, "complete");
    }
    await position(acc, a, FAR_DEPOT, Date.now() - 20 * 60_000);
    // Each keeps its own (reassign: false), so b's route has a stop to start towards.
    const done = await optimize(acc, {
      routes: [ra.url, rb.url],
      from_now: true,
      reassign: false,
      apply: false,
    });
    const of = (rt: { url: string }) => done.result.routes.find((x: any) => x.route === rt.url);
    const pointOf = (url: string) => STOPS[ta.findIndex((x) => x.url === url)];
    const firstA = of(ra).stops[0];
    expect(firstA.distance_m).toBeCloseTo((await leg(STOPS[1], pointOf(firstA.task))).distance, 0);
    const firstB = of(rb).stops[0];
    expect(firstB.task).toBe(tb.url);
    expect(firstB.distance_m).toBeCloseTo((await leg(DEPOT, STOPS[5])).distance, 0);
    // Nothing before the shift starts (later than now), and the first stop right after it.
    for (const rt of done.result.routes)
      for (const s of rt.stops) expect(Date.parse(s.arrival)).toBeGreaterThanOrEqual(shiftStart);
    expect(Date.parse(firstB.arrival)).toBeCloseTo(shiftStart + firstB.duration_s * 1000, -3);
    expect(
      of(ra)
        .stops.map((s: any) => s.task)
        .sort(),
    ).toEqual(urls(ta.slice(2)).sort());
    // Without apply, nothing moved.
    const read = await call(`/routes/${ra.id}/`, { token: acc.admin.token });
    expect(read.body.tasks).toEqual(urls(ta));
  });
});

describe("route optimization with reassign: false (contract §29)", () => {
  it("keeps each assigned task with its assignee, changes only the order; unassigned tasks are still placed", async () => {
    const acc = await newAccount();
    const a = await worker(acc, DEPOT);
    const b = await worker(acc, FAR_DEPOT);
    const ra = await route(acc, a, "2030-06-03");
    const rb = await route(acc, b, "2030-06-03");
    // a's stops in a poor order; b's one stop is next to a's depot, far from b's.
    const a0 = await task(acc, STOPS[1], { assignee: a.user, route: ra.url, position: 1 });
    const a1 = await task(acc, STOPS[4], { assignee: a.user, route: ra.url, position: 2 });
    const a2 = await task(acc, STOPS[5], { assignee: a.user, route: ra.url, position: 3 });
    const b0 = await task(acc, STOPS[6], { assignee: b.user, route: rb.url, position: 1 });
    const free = await task(acc, [24.94, 59.44]);
    const body = { routes: [ra.url, rb.url], tasks: [free.url] };
    // Free to reassign, b's stop would move to a.
    const moved = await optimize(acc, { ...body, apply: false });
    const on = (o: any, rt: { url: string }) =>
      o.result.routes.find((x: any) => x.route === rt.url)?.stops.map((s: any) => s.task) ?? [];
    expect(on(moved, ra)).toContain(b0.url);
    const kept = await optimize(acc, { ...body, reassign: false });
    expect(kept).toMatchObject({ reassign: false, from_now: false });
    expect(on(kept, ra).sort()).toEqual(urls([a0, a1, a2]).sort());
    expect(on(kept, rb)).toContain(b0.url);
    expect(on(kept, rb)).toContain(free.url);
    expect(kept.result.before.routes.map((x: any) => x.tasks)).toEqual([urls([a0, a1, a2]), [b0.url]]);
    // a's three stops, reordered: no longer than as they stood.
    const ka = kept.result.routes.find((x: any) => x.route === ra.url);
    expect(ka.distance_m).toBeLessThanOrEqual(kept.result.before.routes[0].distance_m + 1e-6);
    // Applied: assignees as they were, the free task assigned to the route it went on.
    for (const [x, who] of [
      [a0, a],
      [a1, a],
      [a2, a],
      [b0, b],
      [free, b],
    ] as const) {
      const read = await call(`/tasks/${x.id}/`, { token: acc.admin.token });
      expect(read.body.assignee).toBe(who.user);
    }
    const cmds = await call(`/task_commands/?task=${b0.id}`, { token: acc.admin.token });
    expect(cmds.body.results.map((c: any) => c.action)).toEqual(["update"]);
  });
});

describe("route optimization: from_now and reassign refused when they cannot hold", () => {
  it("400 for a wrong type, a listed task under way on no given route, a listed task whose assignee has no route here", async () => {
    const { acc, today } = await noonAccount();
    const w = await worker(acc);
    const other = await worker(acc);
    const r = await route(acc, w, today);
    await task(acc, STOPS[0], { assignee: w.user, route: r.url, position: 1 });
    for (const bad of [{ from_now: "yes" }, { reassign: 1 }]) {
      const res = await call("/route_optimizations/", {
        token: acc.admin.token,
        body: { routes: [r.url], ...bad },
      });
      expectStatus(res, 400);
      expect(Object.keys(res.body)).toEqual(Object.keys(bad));
    }
    const underWay = await task(acc, STOPS[1], { assignee: w.user });
    await command(acc, underWay, "transit");
    const a = await call("/route_optimizations/", {
      token: acc.admin.token,
      body: { routes: [r.url], tasks: [underWay.url], from_now: true },
    });
    expectStatus(a, 400);
    expect(a.body.tasks).toEqual([
      "With from_now, a listed task in transit or active must be on one of the given routes.",
    ]);
    const theirs = await task(acc, STOPS[2], { assignee: other.user });
    const b = await call("/route_optimizations/", {
      token: acc.admin.token,
      body: { routes: [r.url], tasks: [theirs.url], reassign: false },
    });
    expectStatus(b, 400);
    expect(b.body.tasks).toEqual([
      "With reassign false, a listed assigned task needs a route of its assignee among the given routes.",
    ]);
    // The same tasks are fine without those flags.
    const ok = await call("/route_optimizations/", {
      token: acc.admin.token,
      body: { routes: [r.url], tasks: [underWay.url, theirs.url], apply: false },
    });
    expectStatus(ok, 202);
    expect(ok.body).toMatchObject({ from_now: false, reassign: true });
  });
});
