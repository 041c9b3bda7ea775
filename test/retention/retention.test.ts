import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { selectAll, uuidBytes, uuidText } from "../../src/db/uuid-bytes";
import { dispatchPendingEvents } from "../../src/services/events/dispatch";
import { sweepRecurrences } from "../../src/services/recurrences";
import { sweepRetention } from "../../src/services/retention/sweep";
import { insertTask } from "../factories";
import { uploadFile } from "../files/helpers";
import { addUser, call, expectStatus, newAccount, type TestAccount } from "../helpers";
import { recurrenceBody } from "../recurrences/helpers";
import { stored } from "../stored";
import { sampleTask } from "../tasks/helpers";

const DAY = 86_400_000;

const count = async (sql: string, ...params: unknown[]) =>
  (await stored
    .prepare(sql)
    .bind(...params)
    .first<{ n: number }>())!.n;

/** An account with a webhook and some events (tasks created, a command). */
async function busyAccount(name: string) {
  const acc = await newAccount(name);
  expectStatus(
    await call("/webhooks/", { token: acc.admin.token, body: { url: "https://example.com/hook" } }),
    201,
  );
  for (let i = 0; i < 3; i++)
    expectStatus(await call("/tasks/", { token: acc.admin.token, body: sampleTask(acc) }), 201);
  return acc;
}

/** The lines of an archive object through its signed link, and the object's metadata. */
async function readArchive(url: string) {
  const r = await fetchBytes(url);
  expect(r.status).toBe(200);
  const text = new TextDecoder().decode(
    await new Response(
      new Blob([r.bytes]).stream().pipeThrough(new DecompressionStream("gzip")),
    ).arrayBuffer(),
  );
  const digest = [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
  return {
    lines: text
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
    sha256: digest,
  };
}

async function fetchBytes(url: string) {
  const { exports } = await import("cloudflare:workers");
  const res = await exports.default.fetch(new Request(url));
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()) };
}

/** A reader of the account's archive list that needs no token later: straight from D1. */
async function archivesOfLater(acc: TestAccount) {
  return async () =>
    (
      await stored
        .prepare("SELECT * FROM archives WHERE account_id = ? AND kind = 'sms' AND state = 'done'")
        .bind(acc.account.id)
        .all<{ rows: number }>()
    ).results;
}

async function archivesOf(acc: TestAccount, query = "") {
  const r = await call(`/archives/?page_size=500${query}`, { token: acc.admin.token });
  expectStatus(r, 200);
  return r.body.results as any[];
}

/** Sets the account's `data_retention_days` (the PATCH's answer). */
const retainFinishedTasks = (acc: TestAccount, days: number) =>
  call(`/accounts/${acc.account.id}/`, {
    method: "PATCH",
    token: acc.admin.token,
    body: { data_retention_days: days },
  });

const eventsOf = (acc: TestAccount) =>
  count("SELECT COUNT(*) AS n FROM events WHERE account_id = unhex(?, '-')", acc.account.id);

/** Sets the state of every webhook delivery of the account (as the relay's attempts would). */
const markDeliveries = (acc: TestAccount, state: string) =>
  stored
    .prepare(
      `UPDATE webhook_deliveries SET state = ? WHERE webhook_id IN (SELECT ${uuidBytes("id")} FROM webhooks WHERE account_id = ?)`,
    )
    .bind(state, acc.account.id)
    .run();

const deliveriesOf = (acc: TestAccount) =>
  count(
    `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE webhook_id IN (SELECT ${uuidBytes("id")} FROM webhooks WHERE account_id = ?)`,
    acc.account.id,
  );

describe("retention windows and the archive (contract §23)", () => {
  it("a delivery still owed stays past its window, with its event; once final, both go (issue 45, item 7)", async () => {
    const acc = await busyAccount("Owed");
    await dispatchPendingEvents(env);
    const made = await deliveriesOf(acc);
    expect(made).toBeGreaterThanOrEqual(3);
    const events = await eventsOf(acc);
    // The cron's clock 40 days ahead, the deliveries pending (the queue was away) or held (the
    // webhook failed): nothing is archived, whatever the age.
    for (const state of ["pending", "held"]) {
      await markDeliveries(acc, state);
      await sweepRetention(env, Date.now() + 40 * DAY);
      expect(await deliveriesOf(acc)).toBe(made);
      expect(await eventsOf(acc)).toBe(events);
    }
    await markDeliveries(acc, "failed");
    await sweepRetention(env, Date.now() + 40 * DAY);
    expect(await deliveriesOf(acc)).toBe(0);
    expect(await eventsOf(acc)).toBe(0);
    expect((await archivesOf(acc, "&kind=webhook_deliveries"))[0].rows).toBe(made);
  });

  it("a retry schedule longer than the window stretches the window of deliveries and events", async () => {
    const acc = await busyAccount("Long retries");
    await dispatchPendingEvents(env);
    await markDeliveries(acc, "succeeded");
    const events = await eventsOf(acc);
    const long = { ...env, WEBHOOK_RETRY_SCHEDULE: "20d,20d" } as Env;
    await sweepRetention(long, Date.now() + 35 * DAY);
    expect(await eventsOf(acc)).toBe(events);
    await sweepRetention(long, Date.now() + 42 * DAY);
    expect(await eventsOf(acc)).toBe(0);
    expect(await deliveriesOf(acc)).toBe(0);
  });

  it("events and deliveries go to the archive after 30 days, SMS after 90; the archive is whole", async () => {
    const acc = await busyAccount("Busy");
    expectStatus(
      await call("/sms/", { token: acc.admin.token, body: { to: "+358401234567", message: "Hello" } }),
      201,
    );
    const before = (
      await stored
        .prepare(
          `SELECT ${uuidText("id")} AS id FROM events WHERE account_id = unhex(?, '-') ORDER BY events.id`,
        )
        .bind(acc.account.id)
        .all<{ id: string }>()
    ).results.map((e) => e.id);
    expect(before.length).toBeGreaterThanOrEqual(3);
    // The relay has made the webhook's deliveries (keyed by webhook and event, migration 0025).
    const hookDeliveries = () =>
      stored
        .prepare(
          `SELECT ${selectAll("webhook_deliveries", "d")} FROM webhook_deliveries d JOIN webhooks w ON w.id = ${uuidText("d.webhook_id")}
         WHERE w.account_id = ? ORDER BY d.event_id`,
        )
        .bind(acc.account.id)
        .all<{ event_id: string; webhook_id: string; state: string }>();
    await dispatchPendingEvents(env);
    expect((await hookDeliveries()).results.map((d) => d.event_id)).toEqual(before);
    // Delivered (only final deliveries are archived: the next test keeps one owed).
    await markDeliveries(acc, "succeeded");
    const deliveries = (await hookDeliveries()).results;
    const now = Date.now();
    await sweepRetention(env, now + 29 * DAY);
    expect(await eventsOf(acc)).toBe(before.length);
    const run = await sweepRetention(env, now + 31 * DAY);
    expect(run.archived).toBeGreaterThanOrEqual(before.length);
    expect(await eventsOf(acc)).toBe(0);
    expect((await hookDeliveries()).results).toEqual([]);
    const [delivered] = await archivesOf(acc, "&kind=webhook_deliveries");
    expect(delivered.rows).toBe(deliveries.length);
    const archivedDeliveries = (await readArchive(delivered.url)).lines;
    expect(archivedDeliveries.map((l) => l.id)).toEqual(before);
    expect(archivedDeliveries[0]).toMatchObject({
      id: deliveries[0].event_id,
      event_id: deliveries[0].event_id,
      webhook_id: deliveries[0].webhook_id,
      state: deliveries[0].state,
    });
    expect(await count("SELECT COUNT(*) AS n FROM sms WHERE account_id = ?", acc.account.id)).toBe(1);
    const archives = await archivesOf(acc, "&kind=events");
    expect(archives).toHaveLength(1);
    const [events] = archives;
    expect(events).toMatchObject({
      kind: "events",
      date: new Date(now).toISOString().slice(0, 10),
      rows: before.length,
    });
    const { lines, sha256 } = await readArchive(events.url);
    expect(lines.map((l) => l.id)).toEqual(before);
    expect(sha256).toBe(events.sha256);
    expect(lines[0]).toMatchObject({ account_id: acc.account.id, type: "task.created" });
    expect(lines[0].payload.url).toMatch(/\/tasks\//);
    // /events/ says how far back it reaches.
    const list = await call("/events/", { token: acc.admin.token });
    expect(Math.abs(Date.parse(list.body.retained_since) - (Date.now() - 30 * DAY))).toBeLessThan(60_000);
    const sms = await archivesOfLater(acc);
    await sweepRetention(env, now + 91 * DAY);
    expect(await count("SELECT COUNT(*) AS n FROM sms WHERE account_id = ?", acc.account.id)).toBe(0);
    // (The session behind the admin's token is 61 days past its expiry on the moved clock and was
    // deleted with the spent tokens: the archive is read with the rows D1 still has.)
    const [smsArchive] = await sms();
    expect(smsArchive.rows).toBe(1);
  });

  it("a crash between the archive write and the delete, or between two parts, loses and duplicates nothing", async () => {
    const acc = await busyAccount("Crashy");
    for (let i = 0; i < 4; i++) await call("/tasks/", { token: acc.admin.token, body: sampleTask(acc) });
    const ids = (
      await stored
        .prepare(
          `SELECT ${uuidText("id")} AS id FROM events WHERE account_id = unhex(?, '-') ORDER BY events.id`,
        )
        .bind(acc.account.id)
        .all<{ id: string }>()
    ).results.map((e) => e.id);
    expect(ids.length).toBeGreaterThanOrEqual(7);
    const small = { ...env, ARCHIVE_ROWS_PER_OBJECT: "3" } as Env;
    let deletes = 1;
    let puts = 1;
    const crashing = {
      ...small,
      FILES: new Proxy(env.FILES, {
        get(target, prop) {
          const v = Reflect.get(target, prop);
          const mine = (key: string) => key.includes(`/${acc.account.id}/events/`);
          if (prop === "get")
            return async (key: string, ...rest: unknown[]) => {
              // Part 1 is written, then the run dies before it is verified and its rows deleted.
              if (mine(key) && !key.includes(".2.") && !key.includes(".3.") && deletes-- > 0)
                throw new Error("crash between the archive write and the delete");
              return (target.get as (...a: unknown[]) => unknown)(key, ...rest);
            };
          if (prop === "put")
            return async (key: string, ...rest: unknown[]) => {
              // The second part's object fails to be written once (between two parts).
              if (mine(key) && key.includes(".2.jsonl") && puts-- > 0)
                throw new Error("crash while writing part 2");
              return (target.put as (...a: unknown[]) => unknown)(key, ...rest);
            };
          return typeof v === "function" ? v.bind(target) : v;
        },
      }),
    } as Env;
    const later = Date.now() + 31 * DAY;
    // Delivered by then (a delivery still owed keeps its event: the first test).
    await dispatchPendingEvents(env);
    await markDeliveries(acc, "succeeded");
    await sweepRetention(crashing, later).catch(() => undefined);
    await sweepRetention(crashing, later).catch(() => undefined);
    // Both crashes happened (each counter started at 1).
    expect(Math.max(deletes, puts)).toBeLessThanOrEqual(0);
    for (let i = 0; i < 5 && (await eventsOf(acc)) > 0; i++) await sweepRetention(small, later);
    expect(await eventsOf(acc)).toBe(0);
    const parts = await archivesOf(acc, "&kind=events");
    expect(parts.length).toBe(Math.ceil(ids.length / 3));
    const archived: string[] = [];
    for (const p of parts.sort((a, b) => a.part - b.part)) {
      const { lines, sha256 } = await readArchive(p.url);
      expect(sha256).toBe(p.sha256);
      expect(lines).toHaveLength(p.rows);
      archived.push(...lines.map((l) => l.id));
    }
    expect(archived).toEqual(ids);
  });

  it("one account's retention never touches another's rows; other accounts see no archive", async () => {
    const old = await busyAccount("Old");
    const fresh = await busyAccount("Fresh");
    const before = await eventsOf(fresh);
    await dispatchPendingEvents(env);
    for (const a of [old, fresh]) await markDeliveries(a, "succeeded");
    await sweepRetention({ ...env, EVENTS_RETENTION_DAYS: "5" } as Env, Date.now() + 6 * DAY);
    expect(await eventsOf(old)).toBe(0);
    // The same run saw `fresh`'s rows too (the same age): the window is per kind, not per
    // account, so they went too; what matters is whose archive lists them.
    const mine = await archivesOf(old);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((a) => a.account === old.account.url)).toBe(true);
    const theirs = await archivesOf(fresh);
    expect(theirs.every((a) => a.account === fresh.account.url)).toBe(true);
    expect(before).toBeGreaterThan(0);
    // A worker or manager of the account: no archive.
    const manager = await addUser(old, "manager");
    expectStatus(await call("/archives/", { token: manager.token }), 403);
    // The link is the capability: without its signature, 403.
    const bare = new URL(mine[0].url);
    expect((await fetchBytes(`${bare.origin}${bare.pathname}`)).status).toBe(403);
  });

  it("a finished task past data_retention_days goes with all that is its own, and nothing points at it", async () => {
    const acc = await newAccount("Retaining");
    const other = await newAccount("Keeping");
    const r = await retainFinishedTasks(acc, 1);
    expectStatus(r, 200);
    expect(r.body.data_retention_days).toBe(1);
    const order = await call("/orders/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        reference: "R-1",
        tasks_data: [{ category: "drop_off", address: { raw_address: "Tartu" } }],
      },
    });
    expectStatus(order, 201);
    const done = order.body.tasks[0] as string;
    const doneId = done.split("/").at(-2)!;
    const open = await call("/tasks/", { token: acc.admin.token, body: sampleTask(acc) });
    const fu = await uploadFile(
      acc.admin.token,
      "proof.txt",
      "text/plain",
      new TextEncoder().encode("proof"),
    );
    const doc = await call("/documents/", {
      token: acc.admin.token,
      body: { account: acc.account.url, task: done, file_upload: fu.url },
    });
    expectStatus(doc, 201);
    const tracker = await call("/trackers/", {
      token: acc.admin.token,
      body: { tasks: [done, open.body.url] },
    });
    expectStatus(tracker, 201);
    const cmd = await call("/task_commands/", {
      token: acc.admin.token,
      body: {
        task: done,
        external_id: `x-${crypto.randomUUID()}`,
        time: new Date().toISOString(),
        action: "cancel",
      },
    });
    expect(cmd.body.state).toBe("accepted");
    const keep = await insertTask(other.account.id, { state: "completed" });
    const docKey = decodeURIComponent(new URL(doc.body.file).pathname.slice("/files/".length));
    expect(await env.FILES.head(docKey)).not.toBeNull();

    await sweepRetention(env, Date.now() + 2 * DAY);
    expectStatus(await call(`/tasks/${doneId}/`, { token: acc.admin.token }), 404);
    expectStatus(await call(order.body.url, { token: acc.admin.token }), 404);
    expectStatus(await call(`/tasks/${open.body.id}/`, { token: acc.admin.token }), 200);
    expectStatus(await call(`/tasks/${keep.id}/`, { token: other.admin.token }), 200);
    for (const table of ["task_commands", "attachments", "form_responses", "notification_sends"])
      expect(await count(`SELECT COUNT(*) AS n FROM ${table} WHERE task_id = ?`, doneId), table).toBe(0);
    expect(await env.FILES.head(docKey)).toBeNull();
    const t = await call(`/trackers/${tracker.body.id}/`, { token: acc.admin.token });
    expect(t.body.tasks).toEqual([open.body.url]);
    const [archive] = await archivesOf(acc, "&kind=tasks");
    expect(archive.rows).toBe(1);
    const { lines } = await readArchive(archive.url);
    expect(lines[0].task.id).toBe(doneId);
    expect(lines[0].commands.map((c: any) => c.action)).toEqual(["cancel"]);
    expect(lines[0].documents.map((d: any) => d.id)).toEqual([doc.body.id]);
    expect(lines[0].order.reference).toBe("R-1");
    // data_retention_days is validated: 0 and 40,000 are 400; null keeps again.
    for (const bad of [0, 40_000, "7"]) {
      const b = await call(`/accounts/${acc.account.id}/`, {
        method: "PATCH",
        token: acc.admin.token,
        body: { data_retention_days: bad },
      });
      expectStatus(b, 400);
    }
  });

  it("a task a recurrence made takes its occurrence claim along; the recurrence's other claims stay", async () => {
    const acc = await newAccount("Recurring retention");
    expectStatus(await retainFinishedTasks(acc, 1), 200);
    const r = await call("/recurrences/", {
      token: acc.admin.token,
      body: recurrenceBody(acc, { rule: "FREQ=DAILY", start: "2030-06-01T09:00:00" }),
    });
    expectStatus(r, 201);
    await sweepRecurrences(env, Date.parse("2030-06-01T00:00:00Z"));
    const claims = async () =>
      (
        await stored
          .prepare(
            "SELECT object_id FROM recurrence_occurrences WHERE recurrence_id = ? ORDER BY occurrence_at",
          )
          .bind(r.body.id)
          .all<{ object_id: string }>()
      ).results.map((c) => c.object_id);
    const before = await claims();
    expect(before.length).toBeGreaterThan(1);
    const cancel = await call("/task_commands/", {
      token: acc.admin.token,
      body: {
        task: new URL(`/tasks/${before[0]}/`, acc.account.url).href,
        external_id: `x-${crypto.randomUUID()}`,
        time: new Date().toISOString(),
        action: "cancel",
      },
    });
    expect(cancel.body.state).toBe("accepted");
    await sweepRetention(env, Date.now() + 2 * DAY);
    expectStatus(await call(`/tasks/${before[0]}/`, { token: acc.admin.token }), 404);
    // Its claim went with it (the cron would otherwise never make that day again, and nothing
    // would point at a task that is gone); the open tasks keep theirs.
    expect(await claims()).toEqual(before.slice(1));
  });
});
