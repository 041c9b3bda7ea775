import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { addUser, call, expectStatus, newAccount, type TestAccount } from "../helpers";
import { stored } from "../stored";
import { sampleTask } from "../tasks/helpers";
import { open, ticket } from "./client";

afterEach(() => vi.useRealTimers());

const createTask = async (acc: TestAccount, extra: Record<string, unknown> = {}) => {
  const r = await call("/tasks/", { token: acc.admin.token, body: sampleTask(acc, extra) });
  expectStatus(r, 201);
  return r.body;
};

describe("the live event stream (contract §25)", () => {
  it("a ticket opens one stream, once, within 60 s; no token in any URL", async () => {
    const acc = await newAccount();
    const r = await call("/events/stream_tickets/", { method: "POST", token: acc.admin.token });
    expectStatus(r, 201);
    expect(r.body.url).toMatch(/^wss?:\/\/api\.test\/events\/stream\/\?ticket=[\w-]{43}$/);
    expect(r.body.url).not.toContain(acc.admin.token);
    expect(Date.parse(r.body.expires_at) - Date.now()).toBeLessThanOrEqual(60_000);
    const first = await open(r.body.url);
    expect(first.status).toBe(101);
    const again = await open(r.body.url);
    expect(again.status).toBe(400);
    expect(again.body.ticket[0]).toMatch(/Invalid, used or expired/);
    const late = await ticket(acc.admin.token);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 61_000);
    expect((await open(late)).status).toBe(400);
    vi.useRealTimers();
    expectStatus(await call("/events/stream_tickets/", { method: "POST" }), 401);
    const plain = await exports.default.fetch(
      new Request(`${(await ticket(acc.admin.token)).replace(/^ws/, "http")}`),
    );
    expect(plain.status).toBe(426);
  });

  it("events arrive as they are written, as /events/ has them; ?types= filters", async () => {
    const acc = await newAccount();
    const all = await open(await ticket(acc.admin.token));
    const states = await open(await ticket(acc.admin.token, "&types=task.state_changed"));
    const task = await createTask(acc);
    await all.until(() => all.messages.some((m) => m.type === "task.created"), "task.created");
    const created = all.messages.find((m) => m.type === "task.created")!;
    expect(created.data.id).toBe(task.id);
    const listed = await call(`/events/${created.id}/`, { token: acc.admin.token });
    expect(listed.body).toEqual(created);
    await call("/task_commands/", {
      token: acc.admin.token,
      body: {
        task: task.url,
        external_id: `c-${crypto.randomUUID()}`,
        time: new Date().toISOString(),
        action: "cancel",
      },
    });
    await states.until(() => states.messages.length > 0, "task.state_changed");
    expect(states.messages.map((m) => m.type)).toEqual(["task.state_changed"]);
    await all.until(
      () => all.messages.some((m) => m.type === "task_command.accepted"),
      "the command's event",
    );
    const ids = all.messages.map((m) => m.id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("stream_stats counts the account's connections and the object's starts; admins only; the live flag is written once", async () => {
    const acc = await newAccount();
    const before = await call("/events/stream_stats/", { token: acc.admin.token });
    expectStatus(before, 200);
    expect(before.body.connections).toBe(0);
    expect(before.body.wakes).toBeGreaterThanOrEqual(1);
    expect(Number.isNaN(Date.parse(before.body.awake_since))).toBe(false);
    const a = await open(await ticket(acc.admin.token));
    const flag = async () =>
      (await stored.prepare("SELECT live_until FROM accounts WHERE id = ?").bind(acc.account.id).first<any>())
        .live_until;
    const first = await flag();
    expect(first).toBeGreaterThan(Date.now());
    const b = await open(await ticket(acc.admin.token));
    // A second screen opening does not move the flag (it has most of its day left).
    expect(await flag()).toBe(first);
    const during = await call("/events/stream_stats/", { token: acc.admin.token });
    expect(during.body.connections).toBe(2);
    // Nothing happened: the same instance, no further start.
    expect(during.body.wakes).toBe(before.body.wakes);
    a.ws.close(1000);
    b.ws.close(1000);
    const worker = await addUser(acc, "worker");
    expectStatus(await call("/events/stream_stats/", { token: worker.token }), 403);
    const bad = await call("/events/stream_stats/?connections=1", { token: acc.admin.token });
    expectStatus(bad, 400);
    expect(bad.body).toEqual({ connections: ["Unknown query parameter."] });
  });

  it("a burst of writes while a fan-out runs reaches every stream once each, in id order", async () => {
    const acc = await newAccount();
    const streams = await Promise.all(
      Array.from({ length: 3 }, async () =>
        open(await ticket(acc.admin.token, "&types=task_command.accepted")),
      ),
    );
    const tasks = await Promise.all(Array.from({ length: 3 }, () => createTask(acc)));
    const ids = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const r = await call("/task_commands/", {
          token: acc.admin.token,
          body: {
            task: tasks[i % 3].url,
            external_id: `burst-${i}-${crypto.randomUUID()}`,
            time: new Date().toISOString(),
            action: "update",
            task_data: { position: i },
          },
        });
        expectStatus(r, 201);
        return r.body.id as string;
      }),
    );
    for (const s of streams) {
      await s.until(() => s.messages.length >= 30, "30 command events", 10_000);
      await new Promise((r) => setTimeout(r, 200));
      const got = s.messages.map((m) => m.data.id);
      expect([...got].sort()).toEqual([...ids].sort());
      const eventIds = s.messages.map((m) => m.id);
      expect([...eventIds].sort()).toEqual(eventIds);
    }
  });

  it("reconnecting with ?after= the last id gets what was missed, then live events, no gap, no duplicate", async () => {
    const acc = await newAccount();
    const first = await open(await ticket(acc.admin.token));
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push((await createTask(acc)).id);
    await first.until(
      () => first.messages.filter((m) => m.type === "task.created").length === 3,
      "three events",
    );
    const last = first.messages.at(-1)!.id;
    first.ws.close(1000, "bye"); // killed mid-burst: the next events happen while nobody listens
    for (let i = 0; i < 4; i++) made.push((await createTask(acc)).id);
    const again = await open(await ticket(acc.admin.token, `&after=${last}`));
    await again.until(() => again.messages.length >= 4, "the missed events");
    made.push((await createTask(acc)).id);
    await again.until(() => again.messages.length >= 5, "the live event");
    const seen = [...first.messages, ...again.messages]
      .filter((m) => m.type === "task.created")
      .map((m) => m.data.id);
    expect(seen).toEqual(made);
    expect(again.messages.every((m) => m.id > last)).toBe(true);
  });

  it("a worker sees only events of its own tasks; another account's stream sees nothing", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const other = await newAccount("Other");
    const mine = await open(await ticket(worker.token));
    const theirs = await open(await ticket(other.admin.token));
    const assigned = await createTask(acc, { assignee: worker.user });
    await createTask(acc); // not the worker's
    await mine.until(() => mine.messages.some((m) => m.type === "task.created"), "the worker's task");
    await new Promise((r) => setTimeout(r, 300));
    expect(mine.messages.every((m) => m.data.id === assigned.id || m.data.task?.id === assigned.id)).toBe(
      true,
    );
    expect(mine.messages.filter((m) => m.type === "task.created")).toHaveLength(1);
    expect(theirs.messages).toEqual([]);
  });

  it("signing out closes the stream opened with that token", async () => {
    const acc = await newAccount();
    const s = await open(await ticket(acc.admin.token));
    expectStatus(await call("/logout/", { method: "POST", token: acc.admin.token }), 204);
    await s.until(() => s.closed() !== null, "close");
    expect(s.closed()!.code).toBe(4001);
  });
});

describe("the tracking page's stream (contract §25)", () => {
  it("tells the page `changed` when one of its tasks has news, and carries nothing else", async () => {
    const acc = await newAccount();
    const task = await createTask(acc);
    const other = await createTask(acc);
    const t = await call("/trackers/", { token: acc.admin.token, body: { tasks: [task.url] } });
    expectStatus(t, 201);
    const page = await exports.default.fetch(new Request(t.body.public_url));
    const html = await page.text();
    expect(html).toContain(`data-stream="/t/${t.body.public_url.split("/").at(-2)}/stream/"`);
    const script = await exports.default.fetch(new Request("https://api.test/t/live.js"));
    expect(script.headers.get("Content-Type")).toMatch(/^text\/javascript/);
    expect(await script.text()).toContain("new WebSocket");
    const s = await open(`${t.body.public_url}stream/`);
    expect(s.status).toBe(101);
    const command = (url: string) =>
      call("/task_commands/", {
        token: acc.admin.token,
        body: {
          task: url,
          external_id: `c-${crypto.randomUUID()}`,
          time: new Date().toISOString(),
          action: "cancel",
        },
      });
    await command(other.url); // not this tracker's task: nothing
    await new Promise((r) => setTimeout(r, 300));
    expect(s.messages).toEqual([]);
    await command(task.url);
    await s.until(() => s.messages.length > 0, "changed");
    expect(s.messages).toEqual([{ type: "changed" }]);
    expect((await open(`https://api.test/t/AAAAAAAAAAAAAAAAAAAAAA/stream/`)).status).toBe(404);
  });
});
