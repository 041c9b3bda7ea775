import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { uuidText } from "../../src/db/uuid-bytes";
import { packJsonText, unpackJson, unpackJsonText } from "../../src/formats/packed-json";
import { bulkEventStatements } from "../../src/services/events/outbox";
import { sweepRetention } from "../../src/services/retention/sweep";
import { processDelivery } from "../../src/services/webhooks/deliver";
import { insertTask } from "../factories";
import { addUser, call, expectStatus, newAccount, storedEvents } from "../helpers";
import { stored } from "../stored";

const DAY = 86_400_000;

type Row = { id: string; type: string; base_id: string | null; payload: Uint8Array | number[] };

async function rowsOf(accountId: string): Promise<Row[]> {
  return (
    await stored
      .prepare(
        `SELECT ${uuidText("id")} AS id, type, ${uuidText("base_id")} AS base_id, payload FROM events
         WHERE account_id = unhex(?, '-') ORDER BY events.id`,
      )
      .bind(accountId)
      .all<Row>()
  ).results;
}

const formatOf = (p: Row["payload"]) => (Array.isArray(p) ? p[0] : new Uint8Array(p)[0]);
const sizeOf = (p: Row["payload"]) => (Array.isArray(p) ? p.length : new Uint8Array(p).length);

/** A task assigned with one command: a write of two events (the command's and the task's). */
async function assignedTask() {
  const acc = await newAccount("Shared payloads");
  const task = await insertTask(acc.account.id, { state: "unassigned" });
  const cmd = await call("/task_commands/", {
    token: acc.admin.token,
    body: {
      task: task.url,
      external_id: crypto.randomUUID(),
      time: new Date().toISOString(),
      action: "assign",
      assignee: acc.admin.user,
    },
  });
  expectStatus(cmd, 201);
  expect(cmd.body.state).toBe("accepted");
  return { acc, task, cmd: cmd.body };
}

/** The account's archived events: its finished parts, and their lines in order. */
async function archivedEvents(accountId: string) {
  const parts = (
    await stored
      .prepare(
        "SELECT key, rows FROM archives WHERE account_id = ? AND kind = 'events' AND state = 'done' ORDER BY part",
      )
      .bind(accountId)
      .all<{ key: string; rows: number }>()
  ).results;
  const lines = [];
  for (const p of parts) {
    const object = await env.FILES.get(p.key);
    const text = await new Response(object!.body.pipeThrough(new DecompressionStream("gzip"))).text();
    lines.push(
      ...text
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    );
  }
  return { parts, lines };
}

/**
 * A worker's phone syncing `actions` on one task assigned to it, in one request (one chunk:
 * the transit command keeps them off the coalesced path). With `busy`, another task of the
 * worker is already in transit (the account's limit is 1).
 */
async function workerChunk(actions: string[], opts: { busy?: boolean } = {}) {
  const acc = await newAccount("Chunk");
  const worker = await addUser(acc, "worker");
  if (opts.busy) await insertTask(acc.account.id, { state: "transit", assigneeId: worker.userId });
  const task = await insertTask(acc.account.id, { state: "assigned", assigneeId: worker.userId });
  const r = await call("/task_commands/", {
    token: worker.token,
    body: actions.map((action) => ({
      task: task.url,
      external_id: crypto.randomUUID(),
      time: new Date().toISOString(),
      action,
    })),
  });
  expectStatus(r, 201);
  return { acc, worker, task, commands: r.body };
}

describe("the events of one write share their stored task (contract §23)", () => {
  it("packs against a base: round trip, and no reading without the base", () => {
    const base = JSON.stringify({ id: "t1", state: "assigned", description: "Parcel, leave at the door" });
    const text = JSON.stringify({ id: "c1", action: "assign", task: JSON.parse(base) });
    const packed = packJsonText(text, base);
    expect(packed[0]).toBe(2);
    expect(packed.length).toBeLessThan(packJsonText(text).length);
    expect(unpackJsonText(packed, packJsonText(base))).toBe(text);
    expect(unpackJsonText(packed, { text: base })).toBe(text);
    expect(() => unpackJson(packed)).toThrow(/without its base/);
  });

  it("stores payloads as bytes, sent across the D1 binding as hex (events/outbox.ts)", async () => {
    const { acc } = await assignedTask();
    const { results } = await stored
      .prepare(
        "SELECT typeof(payload) AS kind, length(payload) AS size FROM events WHERE account_id = unhex(?, '-')",
      )
      .bind(acc.account.id)
      .all<{ kind: string; size: number }>();
    expect(results.length).toBeGreaterThanOrEqual(2);
    for (const r of results) {
      expect(r.kind).toBe("blob");
      expect(r.size).toBeGreaterThan(1);
    }
    const rows = await rowsOf(acc.account.id);
    expect(rows.map((r) => formatOf(r.payload)).sort()).toEqual([1, 2]);
  });

  it("stores a command's event against its task's state_changed event, and every reader gets both whole", async () => {
    const { acc, task, cmd } = await assignedTask();
    const rows = await rowsOf(acc.account.id);
    expect(rows.map((r) => r.type)).toEqual(["task_command.accepted", "task.state_changed"]);
    const [dependent, base] = rows;
    // The base is the write's event with the larger id, stored whole; the other names it.
    expect(base.base_id).toBeNull();
    expect(formatOf(base.payload)).toBe(1);
    expect(dependent.base_id).toBe(base.id);
    expect(formatOf(dependent.payload)).toBe(2);
    // No `object_id` any more (readers take the object from the payload; migration 0036).
    const named = await stored
      .prepare("SELECT COUNT(*) AS n FROM pragma_table_info('events') WHERE name = 'object_id'")
      .first<{ n: number }>();
    expect(named!.n).toBe(0);
    // Stored state, unpacked as the service reads it.
    const [commandEvent, taskEvent] = await storedEvents({ accountId: acc.account.id });
    expect(commandEvent.data.id).toBe(cmd.id);
    expect(commandEvent.data.task).toEqual(taskEvent.data);
    expect(taskEvent.data).toMatchObject({ id: task.id, state: "assigned", assignee: acc.admin.user });
    // The command's event carries the whole task inline, yet stores only what the task's lacks.
    const whole = packJsonText(JSON.stringify(commandEvent.data)).length;
    expect(sizeOf(dependent.payload)).toBeLessThan(whole - sizeOf(base.payload) / 2);

    // GET /events/ one per page (the base on the next page), and GET /events/{id}/.
    await stored
      .prepare("UPDATE events SET created_at = created_at - 60000 WHERE account_id = unhex(?, '-')")
      .bind(acc.account.id)
      .run();
    const first = await call("/events/?page_size=1", { token: acc.admin.token });
    expectStatus(first, 200);
    expect(first.body.results[0]).toMatchObject({ id: dependent.id, type: "task_command.accepted" });
    expect(first.body.results[0].data).toEqual(commandEvent.data);
    const second = await call(first.body.next, { token: acc.admin.token });
    expect(second.body.results[0].data).toEqual(taskEvent.data);
    // Pages without the base: filtered out by type, or past the page's end walking back.
    const byType = await call("/events/?type=task_command.accepted", { token: acc.admin.token });
    expect(byType.body.results.map((e: any) => e.data)).toEqual([commandEvent.data]);
    const back = await call(`/events/?before=${base.id}&page_size=1`, { token: acc.admin.token });
    expect(back.body.results.map((e: any) => e.data)).toEqual([commandEvent.data]);
    const one = await call(`/events/${dependent.id}/`, { token: acc.admin.token });
    expectStatus(one, 200);
    expect(one.body.data).toEqual(commandEvent.data);

    // The webhook body carries the command with its task, as the event was rendered. (The
    // delivery row is made here: a webhook made after the write gets none from the relay.)
    const hook = await call("/webhooks/", {
      token: acc.admin.token,
      body: { url: "https://hooks.example.com/shared" },
    });
    expectStatus(hook, 201);
    const due = Date.now();
    await stored
      .prepare(
        `INSERT INTO webhook_deliveries (webhook_id, event_id, state, attempts, next_attempt_at, created_at, updated_at)
       VALUES (unhex(?, '-'), unhex(?, '-'), 'pending', 0, ?, ?, ?)`,
      )
      .bind(hook.body.id, dependent.id, due, due, due)
      .run();
    let body = "";
    const outcome = await processDelivery(
      env,
      { webhookId: hook.body.id, eventId: dependent.id, due },
      {
        fetch: (async (_url: string, init: RequestInit) => {
          body = String(init.body);
          return new Response(null, { status: 204 });
        }) as unknown as typeof fetch,
      },
    );
    expect(outcome).toBe("succeeded");
    expect(JSON.parse(body)).toMatchObject({ type: "task_command.accepted", data: commandEvent.data });
  });

  it("archives each event whole, the base after the events read with it, one row per part", async () => {
    const { acc } = await assignedTask();
    const stored = await storedEvents({ accountId: acc.account.id });
    const one = { ...env, ARCHIVE_ROWS_PER_OBJECT: "1" } as Env;
    const later = Date.now() + 31 * DAY;
    for (let i = 0; i < 10 && (await rowsOf(acc.account.id)).length > 0; i++)
      await sweepRetention(one, later);
    expect(await rowsOf(acc.account.id)).toEqual([]);
    const { parts, lines } = await archivedEvents(acc.account.id);
    expect(parts.map((p) => p.rows)).toEqual([1, 1]);
    expect(lines.map((l) => l.id)).toEqual(stored.map((e) => e.id));
    expect(lines.map((l) => l.payload)).toEqual(stored.map((e) => e.data));
    for (const l of lines) expect(l).not.toHaveProperty("base_id");
  });

  it("stores a phone's chunk of commands on one task against the first command's task, and reads every event whole", async () => {
    const { acc, worker, task, commands } = await workerChunk(["accept", "transit", "activate", "complete"]);
    expect(commands.map((c: any) => c.state)).toEqual(["accepted", "accepted", "accepted", "accepted"]);
    const rows = await rowsOf(acc.account.id);
    expect(rows.map((r) => r.type)).toEqual(
      Array(4).fill(["task_command.accepted", "task.state_changed"]).flat(),
    );
    // The first command's write keeps its own base; every later event reads with it.
    const base = rows[1];
    expect(base.base_id).toBeNull();
    expect(formatOf(base.payload)).toBe(1);
    expect(rows[0].base_id).toBe(base.id);
    for (const r of rows.slice(2)) {
      expect(r.base_id).toBe(base.id);
      expect(formatOf(r.payload)).toBe(2);
    }
    // What readers get is each event as rendered: the task as each command left it.
    const events = await storedEvents({ accountId: acc.account.id });
    const states = events.filter((e) => e.type === "task.state_changed").map((e) => e.data.state);
    expect(states).toEqual(["accepted", "transit", "active", "completed"]);
    events.forEach((e, i) => {
      if (e.type === "task_command.accepted") expect(e.data.task).toEqual(events[i + 1].data);
    });
    expect(events.at(-1)!.data).toMatchObject({ id: task.id, state: "completed", assignee: worker.user });
    await stored
      .prepare("UPDATE events SET created_at = created_at - 60000 WHERE account_id = unhex(?, '-')")
      .bind(acc.account.id)
      .run();
    const listed = await call("/events/?page_size=3", { token: acc.admin.token });
    expectStatus(listed, 200);
    const all = [...listed.body.results];
    for (let next = listed.body.next; next; ) {
      const page = await call(next, { token: acc.admin.token });
      all.push(...page.body.results);
      next = page.body.next;
    }
    expect(all.map((e: any) => e.data)).toEqual(events.map((e) => e.data));
    const last = await call(`/events/${rows.at(-1)!.id}/`, { token: acc.admin.token });
    expect(last.body.data).toEqual(events.at(-1)!.data);
  });

  it("reads a command the transit limit refused in a chunk with the base its chunk stored before it", async () => {
    const { acc } = await workerChunk(["accept", "transit"], { busy: true });
    const rows = await rowsOf(acc.account.id);
    expect(rows.map((r) => r.type)).toEqual([
      "task_command.accepted",
      "task.state_changed",
      "task_command.rejected",
    ]);
    expect(rows[2].base_id).toBe(rows[1].id);
    const stored = await storedEvents({ accountId: acc.account.id });
    expect(stored[2].data.task.state).toBe("accepted");
    expect(stored[2].data.error_message).not.toBe("");
  });

  it("stores dependents whole again when their chunk's base is archived before them", async () => {
    const { acc } = await workerChunk(["accept", "transit", "activate", "complete"]);
    const stored = await storedEvents({ accountId: acc.account.id });
    // One row a part and a run: the sweep takes the rows one by one, oldest first.
    const one = { ...env, ARCHIVE_ROWS_PER_OBJECT: "1", ARCHIVE_ROWS_PER_RUN: "1" } as Env;
    const later = Date.now() + 31 * DAY;
    const seen = [stored.length];
    for (let i = 0; i < 300 && seen.at(-1)! > 0; i++) {
      await sweepRetention(one, later);
      // Whatever is left reads whole after every run (a base never goes before its readers).
      const left = await storedEvents({ accountId: acc.account.id });
      expect(left.map((e) => e.data)).toEqual(stored.slice(stored.length - left.length).map((e) => e.data));
      if (left.length === seen.at(-1)) continue;
      seen.push(left.length);
      // The base (the second event) went while six events read with it stayed: they were
      // stored whole in the transaction that deleted it.
      if (left.length === 6)
        expect((await rowsOf(acc.account.id)).map((r) => r.base_id)).toEqual(Array(6).fill(null));
    }
    expect(seen).toEqual([8, 7, 6, 5, 4, 3, 2, 1, 0]);
    expect(await rowsOf(acc.account.id)).toEqual([]);
    const { lines } = await archivedEvents(acc.account.id);
    expect(lines.map((l) => l.id)).toEqual(stored.map((e) => e.id));
    expect(lines.map((l) => l.payload)).toEqual(stored.map((e) => e.data));
  });

  it("keeps rows whole when they are written only for objects that exist (one may be left out)", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id);
    const missing = crypto.randomUUID();
    await stored.batch(
      bulkEventStatements(
        stored,
        acc.account.id,
        [
          { type: "task.updated", objectId: task.id, data: { id: task.id, n: 1 } },
          { type: "task.updated", objectId: missing, data: { id: missing, n: 2 } },
        ],
        { onlyIfExistsIn: "tasks" },
      ),
    );
    const rows = await rowsOf(acc.account.id);
    expect(rows).toHaveLength(1);
    expect(rows[0].base_id).toBeNull();
    expect((await storedEvents({ accountId: acc.account.id }))[0].data).toEqual({ id: task.id, n: 1 });
  });
});
