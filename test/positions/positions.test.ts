import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { onEveryDatabase } from "../../src/db/shards";
import { sliceOf } from "../../src/domain/positions-codec";
import { streamOf } from "../../src/services/live";
import { sweepPositions } from "../../src/services/positions";
import { cronLateness } from "../../src/services/positions/cron";
import {
  type Actor,
  addUser,
  call,
  expectStatus,
  newAccount,
  storedEvents,
  type TestAccount,
} from "../helpers";
import { stored } from "../stored";

const HOUR = 3_600_000;
const at = (ms: number) => new Date(ms).toISOString();
const point = (lon: number, lat: number) => ({ type: "Point", coordinates: [lon, lat] });

/** The caller's own role (its URL is in `GET /users/me/`, contract §28). */
async function roleOf(_acc: TestAccount, user: Actor) {
  const me = await call("/users/me/", { token: user.token });
  expectStatus(me, 200);
  return { id: me.body.account_role.split("/").filter(Boolean).pop(), on_duty: me.body.on_duty };
}

async function onDuty(acc: TestAccount, worker: Actor, on = true) {
  const role = await roleOf(acc, worker);
  const r = await call(`/account_roles/${role.id}/`, {
    method: "PATCH",
    token: worker.token,
    body: { on_duty: on },
  });
  expectStatus(r, 200);
  expect(r.body.on_duty).toBe(on);
  return role;
}

/** The cron's lateness check, on every database (as src/index.ts runs it). */
const cron = () => onEveryDatabase(env, (db) => cronLateness(db, Date.now()));

/** The account's stream object has written what waits in it (the alarm's work, run now). */
const settle = async (acc: TestAccount) => {
  const stub = streamOf(env, acc.account.id);
  await runDurableObjectAlarm(stub);
};

describe("duty (contract §28)", () => {
  it("a worker sets its own on_duty, and only that; managers set anyone's; each change is an event", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const other = await addUser(acc, "worker");
    const manager = await addUser(acc, "manager");
    const role = await roleOf(acc, worker);
    expect(role.on_duty).toBe(false);
    // A worker finds its role in GET /users/me/; the roles' list stays the dispatchers'.
    expectStatus(await call("/account_roles/", { token: worker.token }), 403);
    const otherRole = await roleOf(acc, other);

    await onDuty(acc, worker);
    // Any other field from a worker: 403, and nothing changes.
    const bad = await call(`/account_roles/${role.id}/`, {
      method: "PATCH",
      token: worker.token,
      body: { on_duty: false, vehicle_capacity: [10] },
    });
    expectStatus(bad, 403);
    expectStatus(
      await call(`/account_roles/${otherRole.id}/`, {
        method: "PATCH",
        token: worker.token,
        body: { on_duty: true },
      }),
      403,
    );
    const after = await call(`/account_roles/${role.id}/`, { token: acc.admin.token });
    expect(after.body.on_duty).toBe(true);
    expect((await call("/users/me/", { token: worker.token })).body.on_duty).toBe(true);
    expect(after.body.vehicle_capacity).toEqual([]);

    const m = await call(`/account_roles/${otherRole.id}/`, {
      method: "PATCH",
      token: manager.token,
      body: { on_duty: true },
    });
    expectStatus(m, 200);
    expectStatus(
      await call(`/account_roles/${otherRole.id}/`, {
        method: "PATCH",
        token: manager.token,
        body: { role: "admin" },
      }),
      403,
    );
    // Setting the same value again is no change: no event.
    expectStatus(
      await call(`/account_roles/${otherRole.id}/`, {
        method: "PATCH",
        token: manager.token,
        body: { on_duty: true },
      }),
      200,
    );
    const events = (await storedEvents({ accountId: acc.account.id })).filter(
      (e) => e.type === "worker.duty_changed",
    );
    expect(events.map((e) => [e.data.user, e.data.on_duty])).toEqual([
      [worker.user, true],
      [other.user, true],
    ]);
    expect(Date.parse(events[0].data.time)).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe("POST /positions/ (contract §28)", () => {
  it("off duty: 409 off_duty and nothing stored; on duty: 202 with what was stored and dropped", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const now = Date.now();
    const one = { location: point(24.94, 60.17), time: at(now - 1000), accuracy_m: 8 };
    const off = await call("/positions/", { token: worker.token, body: one });
    expectStatus(off, 409);
    expect(off.body.code).toBe("off_duty");
    expect((await call(`/users/${worker.userId}/`, { token: acc.admin.token })).body.position).toBeNull();

    await onDuty(acc, worker);
    const r = await call("/positions/", { token: worker.token, body: one });
    expectStatus(r, 202);
    expect(r.body).toEqual({ stored: 1, dropped: 0 });
    // The same position again (a retry after a lost answer) is dropped: nothing stored twice.
    expect((await call("/positions/", { token: worker.token, body: one })).body).toEqual({
      stored: 0,
      dropped: 1,
    });

    const u = await call(`/users/${worker.userId}/`, { token: acc.admin.token });
    expect(u.body.position).toEqual({
      location: point(24.94, 60.17),
      time: at(now - 1000),
      accuracy_m: 8,
    });
    // The user itself sees it; another worker sees null.
    expect((await call("/users/me/", { token: worker.token })).body.position.time).toBe(at(now - 1000));
    const other = await addUser(acc, "worker");
    expect((await call(`/users/${worker.userId}/`, { token: other.token })).body.position).toBeNull();
    const listed = await call("/users/", { token: acc.admin.token });
    expect(listed.body.results.find((x: any) => x.id === worker.userId).position.accuracy_m).toBe(8);
  });

  it("400 naming the item for a time too far ahead, a bad coordinate or a bad date; nothing stored", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    await onDuty(acc, worker);
    const now = Date.now();
    const ok = { location: point(24.94, 60.17), time: at(now - 60_000) };
    const ahead = await call("/positions/", {
      token: worker.token,
      body: [ok, { location: point(24.94, 60.17), time: at(now + 10 * 60_000) }],
    });
    expectStatus(ahead, 400);
    expect(ahead.body[0]).toEqual({});
    expect(ahead.body[1].time[0]).toMatch(/5 minutes ahead/);
    const bad = await call("/positions/", {
      token: worker.token,
      body: [ok, { location: point(200, 60), time: at(now) }],
    });
    expectStatus(bad, 400);
    expect(bad.body[1]).toHaveProperty("location");
    const date = await call("/positions/", {
      token: worker.token,
      body: { location: point(1, 2), time: "yesterday" },
    });
    expectStatus(date, 400);
    expect(date.body.time[0]).toMatch(/ISO 8601/);
    expectStatus(await call("/positions/", { token: worker.token, body: [] }), 400);
    expectStatus(
      await call("/positions/", { token: worker.token, body: Array.from({ length: 501 }, () => ok) }),
      400,
    );
    // Five minutes ahead is still accepted (a phone's clock a little fast).
    expectStatus(
      await call("/positions/", {
        token: worker.token,
        body: { location: point(1, 2), time: at(now + 4 * 60_000) },
      }),
      202,
    );
    const trail = await call("/positions/", { token: worker.token });
    expect(trail.body.results).toHaveLength(1);
  });

  it("a late, out-of-order batch lands in time order, thinned, beside what was flushed to D1", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    await onDuty(acc, worker);
    const start = Date.now() - 3 * HOUR;
    const p = (i: number, ms = 0) => ({
      location: point(24.9 + i * 0.001, 60.1 + i * 0.001),
      time: at(start + i * 15_000 + ms),
      accuracy_m: 5,
      speed_mps: 10.5,
      heading_deg: 90,
    });
    // Live positions from 2 h on, flushed to D1.
    const live = Array.from({ length: 20 }, (_, i) => p(480 + i));
    expect((await call("/positions/", { token: worker.token, body: live })).body).toEqual({
      stored: 20,
      dropped: 0,
    });
    await settle(acc);
    const slices = await stored
      .prepare("SELECT count(*) AS n, sum(count) AS c FROM position_slices WHERE account_id = unhex(?, '-')")
      .bind(acc.account.id)
      .first<{ n: number; c: number }>();
    expect(slices!.c).toBe(20);
    // The phone comes back online with the morning, newest first, with duplicates and near ones.
    const morning = Array.from({ length: 300 }, (_, i) => p(i)).reverse();
    const r = await call("/positions/", {
      token: worker.token,
      body: [...morning.slice(0, 200), p(150, 2000), p(481, 0)],
    });
    expect(r.body).toEqual({ stored: 200, dropped: 2 });
    const r2 = await call("/positions/", { token: worker.token, body: morning.slice(200) });
    expect(r2.body).toEqual({ stored: 100, dropped: 0 });
    // One more live one, still waiting in the object.
    await call("/positions/", { token: worker.token, body: p(500) });
    const all: any[] = [];
    let next: string | null = `/positions/?user=${encodeURIComponent(worker.user)}&page_size=120`;
    while (next) {
      const page = await call(next, { token: acc.admin.token });
      expectStatus(page, 200);
      all.push(...page.body.results);
      next = page.body.next;
    }
    expect(all).toHaveLength(321);
    const times = all.map((x) => Date.parse(x.time));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(all[0]).toEqual({
      user: worker.user,
      location: point(24.9, 60.1),
      time: at(start),
      accuracy_m: 5,
      speed_mps: 10.5,
      heading_deg: 90,
    });
    // From and to, and a page back.
    const window = await call(
      `/positions/?user=${worker.userId}&from=${at(start + 15_000)}&to=${at(start + 60_000)}&page_size=2`,
      { token: acc.admin.token },
    );
    expect(window.body.results.map((x: any) => x.time)).toEqual([at(start + 15_000), at(start + 30_000)]);
    expect(window.body.previous).toBeNull();
    const second = await call(window.body.next, { token: acc.admin.token });
    expect(second.body.results.map((x: any) => x.time)).toEqual([at(start + 45_000), at(start + 60_000)]);
    expect(second.body.next).toBeNull();
    const back = await call(second.body.previous, { token: acc.admin.token });
    expect(back.body.results.map((x: any) => x.time)).toEqual([at(start + 15_000), at(start + 30_000)]);
  });

  it("a flush that reached D1 but was not recorded by the object is not appended twice", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    await onDuty(acc, worker);
    const now = Date.now();
    const p = (i: number) => ({ location: point(10 + i / 1000, 50), time: at(now - 100_000 + i * 6000) });
    await call("/positions/", { token: worker.token, body: [p(0), p(1), p(2)] });
    await settle(acc);
    await call("/positions/", { token: worker.token, body: [p(3), p(4)] });
    // The object restarts: its memory is gone, what it stored is not.
    await evictDurableObject(streamOf(env, acc.account.id));
    await settle(acc);
    await settle(acc);
    const trail = await call("/positions/", { token: worker.token });
    expect(trail.body.results.map((x: any) => x.time)).toEqual([0, 1, 2, 3, 4].map((i) => p(i).time));
  });

  it("a worker reads only its own trail; a dispatcher anyone's", async () => {
    const acc = await newAccount();
    const a = await addUser(acc, "worker");
    const b = await addUser(acc, "worker");
    expectStatus(await call(`/positions/?user=${b.userId}`, { token: a.token }), 403);
    expectStatus(await call(`/positions/?user=${a.userId}`, { token: a.token }), 200);
    expectStatus(await call(`/positions/?user=${a.userId}`, { token: acc.admin.token }), 200);
    expectStatus(await call("/positions/?user=nope", { token: acc.admin.token }), 400);
    expectStatus(await call("/positions/?from=soon", { token: acc.admin.token }), 400);
  });
});

describe("retention (contract §28)", () => {
  it("deletes trails older than the account's position_retention_days, by the slice, and keeps newer ones", async () => {
    const acc = await newAccount();
    const r = await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { position_retention_days: 2 },
    });
    expectStatus(r, 200);
    expect(r.body.position_retention_days).toBe(2);
    expectStatus(
      await call(`/accounts/${acc.account.id}/`, {
        method: "PATCH",
        token: acc.admin.token,
        body: { position_retention_days: 91 },
      }),
      400,
    );
    const worker = await addUser(acc, "worker");
    await onDuty(acc, worker);
    const now = Date.now();
    // Older than the window: dropped on arrival (it would be deleted at once).
    const old = await call("/positions/", {
      token: worker.token,
      body: [
        { location: point(1, 1), time: at(now - 3 * 24 * HOUR) },
        { location: point(1, 1), time: at(now - 1 * 24 * HOUR) },
      ],
    });
    expect(old.body).toEqual({ stored: 1, dropped: 1 });
    await settle(acc);
    const expired = sliceOf(now - 5 * 24 * HOUR);
    await stored
      .prepare(
        "INSERT INTO position_slices (account_id, user_id, slice, count, data) VALUES (unhex(?, '-'), unhex(?, '-'), ?, 1, x'00')",
      )
      .bind(acc.account.id, worker.userId, expired)
      .run();
    await sweepPositions(stored, now);
    const left = await stored
      .prepare("SELECT slice FROM position_slices WHERE account_id = unhex(?, '-')")
      .bind(acc.account.id)
      .all<{ slice: number }>();
    expect(left.results.map((x) => x.slice)).toEqual([sliceOf(now - 24 * HOUR)]);
  });
});

describe("ETA and lateness (contract §28)", () => {
  async function route(acc: TestAccount, worker: Actor, windows: [number, number][]) {
    const tasks = [];
    for (const [i, [after, before]] of windows.entries()) {
      const t = await call("/tasks/", {
        token: acc.admin.token,
        body: {
          account: acc.account.url,
          category: "drop_off",
          address: { raw_address: `Stop ${i}`, location: point(24.95 + i * 0.05, 60.17) },
          complete_after: at(after),
          complete_before: at(before),
          duration: "00:10:00",
        },
      });
      expectStatus(t, 201);
      const assign = await call("/task_commands/", {
        token: acc.admin.token,
        body: {
          task: t.body.url,
          external_id: `a-${crypto.randomUUID()}`,
          time: at(Date.now()),
          action: "assign",
          assignee: worker.user,
          task_data: { position: i + 1 },
        },
      });
      expectStatus(assign, 201);
      tasks.push(t.body);
    }
    return tasks;
  }

  it("tasks carry eta and is_late from the assignee's latest position, in GETs and lists; task.late once per window", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const now = Date.now();
    const [first, second] = await route(acc, worker, [
      [now - HOUR, now + 4 * HOUR],
      [now - HOUR, now + 4 * HOUR],
    ]);
    const unassigned = await call("/tasks/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        category: "drop_off",
        address: { raw_address: "x", location: point(1, 1) },
      },
    });
    expect((await call(`/tasks/${unassigned.body.id}/`, { token: acc.admin.token })).body).toMatchObject({
      eta: null,
      is_late: false,
    });
    // No position and no command location: no ETA yet.
    expect((await call(`/tasks/${first.id}/`, { token: acc.admin.token })).body).toMatchObject({
      eta: null,
      is_late: false,
    });
    await onDuty(acc, worker);
    // Near the first stop: on time.
    await call("/positions/", {
      token: worker.token,
      body: { location: point(24.94, 60.17), time: at(now) },
    });
    await settle(acc);
    const g = await call(`/tasks/${first.id}/`, { token: acc.admin.token });
    expect(g.body.is_late).toBe(false);
    const eta1 = Date.parse(g.body.eta);
    expect(eta1).toBeGreaterThanOrEqual(now);
    expect(eta1).toBeLessThan(now + 10 * 60_000);
    const day = new Date(now).toISOString().slice(0, 10);
    const dayList = await call(`/tasks/?day=${day}&page_size=500&ordering=position`, {
      token: acc.admin.token,
    });
    // The console's read of the day (contract §26) carries them too.
    expect(Date.parse(dayList.body.results.find((t: any) => t.id === first.id)?.eta)).toBeGreaterThanOrEqual(
      eta1,
    );
    const list = await call("/tasks/?ordering=position", { token: worker.token });
    const l2 = list.body.results.find((t: any) => t.id === second.id);
    // The second stop: after the first's travel and its 10 minutes.
    expect(Date.parse(l2.eta)).toBeGreaterThan(eta1 + 10 * 60_000);
    expect(l2.is_late).toBe(false);

    // Now the worker is 600 km away: both stops late. task.late once each.
    await call("/positions/", {
      token: worker.token,
      body: { location: point(24.9, 54.7), time: at(now + 6000) },
    });
    await settle(acc);
    const late = await call(`/tasks/${second.id}/`, { token: acc.admin.token });
    expect(late.body.is_late).toBe(true);
    expect(Date.parse(late.body.eta)).toBeGreaterThan(Date.parse(late.body.complete_before));
    const lateEvents = async () =>
      (await storedEvents({ accountId: acc.account.id })).filter((e) => e.type === "task.late");
    const events = await lateEvents();
    expect(events.map((e) => e.data.task).sort()).toEqual([first.url, second.url].sort());
    expect(events[0].data).toMatchObject({ complete_before: expect.any(String), eta: expect.any(String) });
    // Checked again (a position, the cron): not told twice for the same window.
    await call("/positions/", {
      token: worker.token,
      body: { location: point(24.9, 54.6), time: at(now + 12_000) },
    });
    await settle(acc);
    await cron();
    await settle(acc);
    expect(await lateEvents()).toHaveLength(2);
    // A new window is a new lateness.
    const patched = await call(`/tasks/${first.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { complete_before: at(now + 5 * HOUR) },
    });
    expectStatus(patched, 200);
    await cron();
    await settle(acc);
    expect((await lateEvents()).filter((e) => e.data.task === first.url)).toHaveLength(2);
  });

  it("a GET right after a position's 202 tells the ETA from that position, one position after another", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const now = Date.now();
    const [task] = await route(acc, worker, [[now - HOUR, now + 4 * HOUR]]);
    await onDuty(acc, worker);
    // No alarm is run here: a client reads right after each 202, as an integration would.
    const sendThenRead = async (lon: number, lat: number, time: number) => {
      const r = await call("/positions/", {
        token: worker.token,
        body: { location: point(lon, lat), time: at(time) },
      });
      expectStatus(r, 202);
      expect(r.body.stored).toBe(1);
      const g = await call(`/tasks/${task.id}/`, { token: acc.admin.token });
      expectStatus(g, 200);
      return g.body;
    };
    const near = await sendThenRead(24.94, 60.17, now);
    const far = await sendThenRead(24.95, 59.9, now + 6000);
    const away = await sendThenRead(24.9, 54.7, now + 12_000);
    expect(Date.parse(near.eta)).toBeLessThan(now + 10 * 60_000);
    // 30 km further off, then 600 km: each GET follows the position just sent.
    expect(Date.parse(far.eta)).toBeGreaterThan(Date.parse(near.eta) + 10 * 60_000);
    expect(far.is_late).toBe(false);
    expect(away.is_late).toBe(true);
    // The day's list, read by the worker, too.
    const list = await call("/tasks/?ordering=position", { token: worker.token });
    const listed = list.body.results.find((t: any) => t.id === task.id);
    expect(listed.is_late).toBe(true);
    // From the same position, read a moment later ("now if later", contract §28).
    expect(Date.parse(listed.eta) - Date.parse(away.eta)).toBeGreaterThanOrEqual(0);
    expect(Date.parse(listed.eta) - Date.parse(away.eta)).toBeLessThan(60_000);
  });

  it("positions of many workers within a moment: each in D1's copy by its 202, in far fewer statements than positions", async () => {
    const acc = await newAccount();
    const workers: Actor[] = [];
    for (let i = 0; i < 20; i++) {
      const w = await addUser(acc, "worker");
      await onDuty(acc, w);
      workers.push(w);
    }
    const stub = streamOf(env, acc.account.id);
    await settle(acc);
    const before = (await stub.stats()).positions.d1_statements;
    const now = Date.now();
    // Spread over 0.4 s, as phones' positions arrive: more than one window of copies.
    await Promise.all(
      workers.map(async (w, i) => {
        await new Promise((r) => setTimeout(r, i * 20));
        const r = await call("/positions/", {
          token: w.token,
          body: { location: point(24 + i / 100, 60), time: at(now) },
        });
        expectStatus(r, 202);
        const row = await stored
          .prepare(
            "SELECT lon, time FROM worker_positions WHERE account_id = unhex(?, '-') AND user_id = unhex(?, '-')",
          )
          .bind(acc.account.id, w.userId)
          .first<{ lon: number; time: number }>();
        expect(row).toEqual({ lon: 24 + i / 100, time: now });
      }),
    );
    // A copy per 0.25 s window of arrivals (plus, should the alarm come meanwhile, its flush and checks).
    const statements = (await stub.stats()).positions.d1_statements - before;
    expect(statements).toBeGreaterThanOrEqual(1);
    expect(statements).toBeLessThan(workers.length / 2);
  });

  /** One order of `n` tasks given to `worker`, with the positions `positionOf` gives (null: none). */
  async function chainOf(
    acc: TestAccount,
    worker: Actor,
    n: number,
    positionOf: (i: number) => number | null,
  ) {
    const now = Date.now();
    const order = await call("/orders/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        tasks_data: Array.from({ length: n }, (_, i) => ({
          category: "drop_off",
          address: {
            raw_address: `Stop ${i}`,
            location: point(24.9 + (i % 17) * 0.01, 60.1 + (i % 5) * 0.01),
          },
          duration: "00:03:00",
          complete_after: at(now + (i % 7) * 10 * 60_000),
          complete_before: at(now + 48 * HOUR),
          assignee: worker.user,
          ...(positionOf(i) === null ? {} : { position: positionOf(i) }),
        })),
      },
    });
    expectStatus(order, 201);
    const list = await call(`/tasks/?order=${order.body.id}&page_size=500`, { token: acc.admin.token });
    expectStatus(list, 200);
    expect(list.body.results).toHaveLength(n);
    return list.body.results as any[];
  }

  it("without a position, a GET and the list tell the same ETA from the route's start, then from the worker's newest command's location", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const now = Date.now();
    const day = new Date(now).toISOString().slice(0, 10);
    const r = await call("/routes/", {
      token: acc.admin.token,
      body: {
        name: "R",
        assignee: worker.user,
        date: day,
        start_address: { raw_address: "Depot", location: point(25.5, 60.17) },
      },
    });
    expectStatus(r, 201);
    const made: { id: string; url: string }[] = [];
    for (const lon of [24.95, 25.0]) {
      const t = await call("/tasks/", {
        token: acc.admin.token,
        body: {
          account: acc.account.url,
          category: "drop_off",
          address: { raw_address: `${lon}`, location: point(lon, 60.17) },
          complete_after: at(now),
          complete_before: at(now + 8 * HOUR),
          assignee: worker.user,
          route: r.body.url,
          position: made.length + 1,
        },
      });
      expectStatus(t, 201);
      made.push(t.body);
    }
    const both = async () => {
      const list = await call(`/tasks/?assignee=${encodeURIComponent(worker.user)}`, {
        token: acc.admin.token,
      });
      const listed = new Map<string, string>(list.body.results.map((t: any) => [t.id, t.eta]));
      const got = [];
      for (const t of made) {
        const g = await call(`/tasks/${t.id}/`, { token: acc.admin.token });
        expect(g.body.eta, t.id).toEqual(expect.any(String));
        // Each read computes from its own "now": a few milliseconds apart.
        expect(Math.abs(Date.parse(g.body.eta) - Date.parse(listed.get(t.id)!)), t.id).toBeLessThan(5_000);
        got.push(Date.parse(g.body.eta));
      }
      return got;
    };
    // From the depot, about 28 km east of the first stop.
    const fromDepot = await both();
    expect(fromDepot[0]).toBeGreaterThan(now + 20 * 60_000);
    // The worker's command with a location next to the first stop: the ETA starts there.
    const cmd = await call("/task_commands/", {
      token: worker.token,
      body: {
        task: made[0].url,
        external_id: `acc-${made[0].id}`,
        time: at(Date.now()),
        action: "accept",
        location: point(24.95, 60.171),
      },
    });
    expectStatus(cmd, 201);
    const fromCommand = await both();
    expect(fromCommand[0]).toBeLessThan(fromDepot[0] - 10 * 60_000);
  });

  it("a task's GET reads its chain up to itself, and tells the same ETA as the list, in any order of positions", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    await onDuty(acc, worker);
    // Past MAX_ETA_STOPS (200) on purpose, with ties and tasks without a position (they go last).
    const tasks = await chainOf(acc, worker, 230, (i) => (i % 9 === 4 ? null : (i * 37) % 101));
    await call("/positions/", {
      token: worker.token,
      body: { location: point(24.9, 60.1), time: at(Date.now()) },
    });
    await settle(acc);
    const all = await call(`/tasks/?assignee=${encodeURIComponent(worker.user)}&page_size=500`, {
      token: acc.admin.token,
    });
    expect(all.body.results).toHaveLength(tasks.length);
    const listed = new Map<string, string>(all.body.results.map((t: any) => [t.id, t.eta]));
    expect([...listed.values()].every((e) => typeof e === "string")).toBe(true);
    // The list's ETAs grow along the worker's order (domain/route-order): the chain is in order.
    const ordered = await call(
      `/tasks/?assignee=${encodeURIComponent(worker.user)}&ordering=position&page_size=500`,
      {
        token: acc.admin.token,
      },
    );
    const etas = ordered.body.results.map((t: any) => Date.parse(t.eta));
    expect(etas.slice(0, 200).every((e: number, i: number) => i === 0 || e >= etas[i - 1])).toBe(true);
    for (const t of tasks) {
      const got = await call(`/tasks/${t.id}/`, { token: acc.admin.token });
      expectStatus(got, 200);
      // The ETA is computed at the read's own time: the same minute's chain, to the second.
      expect(Math.abs(Date.parse(got.body.eta) - Date.parse(listed.get(t.id)!)), t.id).toBeLessThan(5_000);
    }
  });

  it("a worker holding CHAIN_READ_CAP open tasks or more gets no ETA, in a GET as in the list", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    await onDuty(acc, worker);
    const tasks = [
      ...(await chainOf(acc, worker, 500, (i) => i)),
      ...(await chainOf(acc, worker, 499, (i) => i)),
    ];
    await call("/positions/", {
      token: worker.token,
      body: { location: point(24.9, 60.1), time: at(Date.now()) },
    });
    await settle(acc);
    // 999: every task has one.
    const first = await call(`/tasks/${tasks[0].id}/`, { token: acc.admin.token });
    expect(first.body.eta).toEqual(expect.any(String));
    await chainOf(acc, worker, 1, () => null);
    for (const t of [tasks[0], tasks[998]]) {
      const got = await call(`/tasks/${t.id}/`, { token: acc.admin.token });
      expect(got.body).toMatchObject({ eta: null, is_late: false });
    }
    const list = await call(`/tasks/?assignee=${encodeURIComponent(worker.user)}&page_size=10`, {
      token: acc.admin.token,
    });
    expect(list.body.results.map((t: any) => t.eta)).toEqual(Array(10).fill(null));
  });

  it("task.late reaches webhooks without waiting for the cron", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const now = Date.now();
    const hook = await call("/webhooks/", {
      token: acc.admin.token,
      body: { url: "https://hooks.example.com/late", events: ["task.late"] },
    });
    expectStatus(hook, 201);
    // A paused webhook: the relay records its deliveries as held, and sends nothing.
    expectStatus(
      await call(`/webhooks/${hook.body.id}/`, {
        method: "PATCH",
        token: acc.admin.token,
        body: { state: "failed" },
      }),
      200,
    );
    await route(acc, worker, [[now - HOUR, now + HOUR]]);
    await onDuty(acc, worker);
    await call("/positions/", { token: worker.token, body: { location: point(24.9, 54.7), time: at(now) } });
    await settle(acc);
    let held = 0;
    for (let i = 0; i < 50 && !held; i++) {
      const row = await stored
        .prepare(
          "SELECT COUNT(*) AS n FROM webhook_deliveries d JOIN webhooks w ON d.webhook_id = unhex(w.id, '-') WHERE w.account_id = ? AND d.state = 'held'",
        )
        .bind(acc.account.id)
        .first<{ n: number }>();
      held = row!.n;
      if (!held) await new Promise((res) => setTimeout(res, 100));
    }
    expect(held).toBe(1);
  });

  it("the tracking page uses the same ETA", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const now = Date.now();
    const [task] = await route(acc, worker, [[now - HOUR, now + 6 * HOUR]]);
    await onDuty(acc, worker);
    await call("/positions/", { token: worker.token, body: { location: point(24.8, 60.2), time: at(now) } });
    await settle(acc);
    const tr = await call("/trackers/", { token: acc.admin.token, body: { tasks: [task.url] } });
    const page = await (
      await (
        await import("cloudflare:workers")
      ).exports.default.fetch(
        new Request(tr.body.public_url, {
          headers: { Accept: "application/json", "CF-Connecting-IP": "198.51.100.9" },
        }),
      )
    ).json<any>();
    const api = await call(`/tasks/${task.id}/`, { token: acc.admin.token });
    expect(api.body.eta).not.toBeNull();
    expect(Math.abs(Date.parse(page.tasks[0].eta) - Date.parse(api.body.eta))).toBeLessThan(5000);
  });
});
