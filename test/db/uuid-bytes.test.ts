import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { accountDatabase } from "../../src/db/shards";
import { selectAll, UUID_COLUMNS, uuidBytes, uuidText } from "../../src/db/uuid-bytes";
import { dispatchPendingEvents } from "../../src/services/events/dispatch";
import { call, expectStatus, newAccount } from "../helpers";
import { sampleTask } from "../tasks/helpers";
import { createHook } from "../webhooks/support";

/**
 * The UUIDs of events, webhook deliveries and task commands are stored as 16 bytes (contract
 * §23, migration 0036, src/db/uuid-bytes.ts): the conversion is exact both ways, keeps the
 * order every keyset walk relies on, and the API reads the same ids it did from text.
 */
describe("UUIDs stored as bytes", () => {
  it("go in and come out unchanged, and order as their text does", async () => {
    const db = env.DB;
    await fc.assert(
      fc.asyncProperty(fc.uuid(), fc.uuid(), async (a, b) => {
        const row = await db
          .prepare(
            `SELECT ${uuidText("x")} AS back, length(x) AS n, x < y AS less, typeof(${uuidText("NULL")}) AS none
             FROM (SELECT ${uuidBytes()} AS x, ${uuidBytes()} AS y)`,
          )
          .bind(a.toUpperCase(), b)
          .first<{ back: string; n: number; less: number; none: string }>();
        expect(row).toEqual({
          back: a.toLowerCase(),
          n: 16,
          less: a.toLowerCase() < b.toLowerCase() ? 1 : 0,
          none: "null",
        });
      }),
      { numRuns: 100 },
    );
    // Text that is not a UUID becomes NULL: it matches no row.
    const bad = await db
      .prepare(`SELECT ${uuidBytes()} IS NULL AS none`)
      .bind("not-a-uuid")
      .first<{ none: number }>();
    expect(bad!.none).toBe(1);
  });

  it("every column of the tables with ids as bytes is read, and those converted are the ones stored as bytes", async () => {
    for (const [table, uuids] of Object.entries(UUID_COLUMNS)) {
      const { results: info } = await env.DB.prepare("SELECT name, type FROM pragma_table_info(?)")
        .bind(table)
        .all<{ name: string; type: string }>();
      const [names] = await env.DB.prepare(`SELECT ${selectAll(table, "x")} FROM ${table} x LIMIT 0`).raw({
        columnNames: true,
      });
      expect(names, table).toEqual(info.map((c) => c.name));
      expect(
        // Blobs that are not ids: an event's packed payload, a trail's encoded positions.
        info
          .filter((c) => c.type.toLowerCase() === "blob" && c.name !== "payload" && c.name !== "data")
          .map((c) => c.name),
        table,
      ).toEqual([...uuids].sort((a, b) => names.indexOf(a) - names.indexOf(b)));
    }
  });

  it("a delivered command's rows hold 16 bytes per id, and the API answers the same ids", async () => {
    const acc = await newAccount();
    const hook = await createHook(acc);
    const task = await call("/tasks/", { token: acc.admin.token, body: sampleTask(acc) });
    expectStatus(task, 201);
    const cmd = await call("/task_commands/", {
      token: acc.admin.token,
      body: {
        task: task.body.url,
        external_id: crypto.randomUUID(),
        time: new Date().toISOString(),
        action: "assign",
        assignee: acc.admin.user,
      },
    });
    expectStatus(cmd, 201);
    await dispatchPendingEvents(env);
    const db = await accountDatabase(env, acc.account.id);
    const shapes = await db.batch<{ t: string; n: number; rows: number }>([
      db
        .prepare(
          `SELECT typeof(id) || typeof(account_id) || typeof(task_id) || typeof(user_id) AS t,
           length(id) + length(account_id) + length(task_id) + length(user_id) AS n, COUNT(*) AS rows
         FROM task_commands WHERE account_id = ${uuidBytes()} GROUP BY 1, 2`,
        )
        .bind(acc.account.id),
      db
        .prepare(
          `SELECT typeof(id) || typeof(account_id) AS t, length(id) + length(account_id) AS n, COUNT(*) AS rows
         FROM events WHERE account_id = ${uuidBytes()} GROUP BY 1, 2`,
        )
        .bind(acc.account.id),
      db
        .prepare(
          `SELECT typeof(webhook_id) || typeof(event_id) AS t, length(webhook_id) + length(event_id) AS n, COUNT(*) AS rows
         FROM webhook_deliveries WHERE webhook_id = ${uuidBytes()} GROUP BY 1, 2`,
        )
        .bind(hook.id),
    ]);
    expect(shapes[0].results).toEqual([{ t: "blobblobblobblob", n: 64, rows: 1 }]);
    expect(shapes[1].results).toEqual([{ t: "blobblob", n: 32, rows: 3 }]);
    expect(shapes[2].results).toEqual([{ t: "blobblob", n: 32, rows: 3 }]);

    // The ids read back as the API gave them: the command, the events, the deliveries.
    const one = await call(new URL(cmd.body.url).pathname, { token: acc.admin.token });
    expectStatus(one, 200);
    expect(one.body).toEqual(cmd.body);
    const listed = await call(`/task_commands/?task=${encodeURIComponent(task.body.url)}`, {
      token: acc.admin.token,
    });
    expect(listed.body.results).toEqual([cmd.body]);
    const events = await db
      .prepare(
        `SELECT ${uuidText("id")} AS id FROM events WHERE account_id = ${uuidBytes()} ORDER BY events.id`,
      )
      .bind(acc.account.id)
      .all<{ id: string }>();
    const deliveries = await call(`/webhooks/${hook.id}/deliveries/`, { token: acc.admin.token });
    expectStatus(deliveries, 200);
    expect(deliveries.body.results.map((d: { id: string }) => d.id)).toEqual(
      events.results.map((e) => e.id).reverse(),
    );
    for (const e of events.results) {
      const got = await call(`/events/${e.id}/`, { token: acc.admin.token });
      expectStatus(got, 200);
      expect(got.body.id).toBe(e.id);
    }
  });
});
