import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { packJsonText, unpackJson, unpackJsonText } from "../../src/formats/packed-json";
import { bulkEventStatements } from "../../src/services/events/outbox";
import { sweepRetention } from "../../src/services/retention/sweep";
import { processDelivery } from "../../src/services/webhooks/deliver";
import { insertTask } from "../factories";
import { call, expectStatus, newAccount, storedEvents } from "../helpers";

const DAY = 86_400_000;

type Row = { id: string; type: string; base_id: string | null; payload: Uint8Array | number[] };

async function rowsOf(accountId: string): Promise<Row[]> {
  return (
    await env.DB.prepare("SELECT id, type, base_id, payload FROM events WHERE account_id = ? ORDER BY id")
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
    // `object_id` is no longer written (readers take the object from the payload).
    const named = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM events WHERE account_id = ? AND object_id IS NOT NULL",
    )
      .bind(acc.account.id)
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
    await env.DB.prepare("UPDATE events SET created_at = created_at - 60000 WHERE account_id = ?")
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
    await env.DB.prepare(
      `INSERT INTO webhook_deliveries (webhook_id, event_id, state, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?, ?, 'pending', 0, ?, ?, ?)`,
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
    const parts = (
      await env.DB.prepare(
        "SELECT key, rows FROM archives WHERE account_id = ? AND kind = 'events' AND state = 'done' ORDER BY part",
      )
        .bind(acc.account.id)
        .all<{ key: string; rows: number }>()
    ).results;
    expect(parts.map((p) => p.rows)).toEqual([1, 1]);
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
    expect(lines.map((l) => l.id)).toEqual(stored.map((e) => e.id));
    expect(lines.map((l) => l.payload)).toEqual(stored.map((e) => e.data));
    for (const l of lines) expect(l).not.toHaveProperty("base_id");
  });

  it("keeps rows whole when they are written only for objects that exist (one may be left out)", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id);
    const missing = crypto.randomUUID();
    await env.DB.batch(
      bulkEventStatements(
        env.DB,
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
