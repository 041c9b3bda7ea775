import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseCsv } from "../../src/formats/csv";
import { jobPrincipal } from "../../src/services/auth/job-principal";
import { createExport } from "../../src/services/exports";
import { failExport, JobError, runExportStep } from "../../src/services/exports/run";
import { BASE, call, expectStatus, newAccount } from "../helpers";
import { scopedTo, stored, withDb } from "../stored";
import { CapturingQueue, envWith, insertTasks } from "./support";

/**
 * The consumer's steps driven by hand (contract §21): each step writes a bounded number of
 * pages, commits its progress and queues the next; a redelivered step writes no row twice.
 */
async function start(rows: number, size: number, vars: Record<string, string>) {
  const acc = await newAccount();
  const ids = await insertTasks(acc.account.id, rows, size);
  const queue = new CapturingQueue();
  const e = await scopedTo(acc.account.id, envWith(vars, queue));
  const p = await jobPrincipal(stored, acc.account.id, acc.admin.userId);
  const row = await createExport(
    e,
    p,
    "tasks",
    { account: acc.account.url, fields: ["id", "description"] },
    {
      zone: null,
      baseUrl: BASE,
    },
  );
  return { acc, ids, queue, e, row };
}

const state = (id: string) =>
  stored
    .prepare("SELECT state, step, row_count, parts, upload_id FROM data_exports WHERE id = ?")
    .bind(id)
    .first<{ state: string; step: number; row_count: number; parts: string; upload_id: string | null }>();

describe("export steps (contract §21)", () => {
  it("writes a file larger than one part through R2 multipart, in steps, row_count growing", async () => {
    // 700 rows of ~8 KiB: about 5.6 MiB, more than one 5 MiB part.
    const { acc, ids, queue, e, row } = await start(700, 8000, {
      EXPORT_PAGE_SIZE: "100",
      EXPORT_PAGES_PER_STEP: "2",
    });
    const counts: number[] = [];
    while (queue.sent.length) {
      const m = queue.sent.shift()!;
      await runExportStep(e, m);
      counts.push((await state(row.id))!.row_count);
    }
    const done = (await state(row.id))!;
    expect(done.state).toBe("completed");
    expect(counts).toEqual([200, 400, 600, 700]);
    expect(JSON.parse(done.parts)).toHaveLength(2);
    expect(done.upload_id).toBeTruthy();
    const r = await call(`/task_exports/${row.id}/`, { token: acc.admin.token });
    expect(r.body).toMatchObject({ state: "completed", row_count: 700 });
    const file = await call(r.body.file);
    expectStatus(file, 200);
    const records = parseCsv(file.text);
    expect(records[0]).toEqual(["id", "description"]);
    expect(records.slice(1).map((x) => x[0])).toEqual(ids);
    expect(records[700][1]).toBe("699:".padEnd(8000, "x"));
    // The carried bytes between steps are gone.
    const carries = await env.FILES.list({ prefix: `exports/${row.id}/carry/` });
    expect(carries.objects).toHaveLength(0);
  });

  it("a step redelivered (after a crash before its commit, or after it committed) writes no row twice", async () => {
    const { ids, queue, e, row } = await start(25, 50, { EXPORT_PAGE_SIZE: "4", EXPORT_PAGES_PER_STEP: "2" });
    // Crash: the second step's commit fails once, after its rows were encoded and carried.
    let failures = 1;
    const crashing = withDb(
      e,
      new Proxy(e.DB, {
        get(target, prop) {
          if (prop !== "prepare")
            return Reflect.get(target, prop).bind?.(target) ?? Reflect.get(target, prop);
          return (sql: string) => {
            if (sql.startsWith("UPDATE data_exports SET row_count") && failures-- > 0) {
              throw new Error("simulated crash before the commit");
            }
            return target.prepare(sql);
          };
        },
      }),
    );
    const first = queue.sent.shift()!;
    await runExportStep(e, first);
    const second = queue.sent.shift()!;
    await expect(runExportStep(crashing, second)).rejects.toThrow("simulated crash");
    expect((await state(row.id))!.row_count).toBe(8);
    await runExportStep(e, second); // the redelivery
    // A stale duplicate of an already committed step: it races the real continuation.
    await runExportStep(e, first);
    while (queue.sent.length) await runExportStep(e, queue.sent.shift()!);
    const done = (await state(row.id))!;
    expect(done.state).toBe("completed");
    expect(done.row_count).toBe(25);
    const obj = await env.FILES.list({ prefix: `exports/${row.id}/` });
    const file = await env.FILES.get(obj.objects.find((o) => !o.key.includes("/carry/"))!.key);
    const records = parseCsv(await file!.text());
    expect(records.slice(1).map((x) => x[0])).toEqual(ids);
  });

  it("fails with the reason when its creator no longer has a role, aborting the upload", async () => {
    const { acc, queue, e, row } = await start(30, 10, {
      EXPORT_PAGE_SIZE: "10",
      EXPORT_PAGES_PER_STEP: "1",
    });
    await runExportStep(e, queue.sent.shift()!);
    await stored
      .prepare("UPDATE account_roles SET is_active = 0 WHERE account_id = ? AND user_id = ?")
      .bind(acc.account.id, acc.admin.userId)
      .run();
    const msg = queue.sent.shift()!;
    const err = await runExportStep(e, msg).catch((x) => x);
    expect(err).toBeInstanceOf(JobError);
    await failExport(e, msg, err.message);
    const failed = await stored
      .prepare("SELECT state, error_message, row_count FROM data_exports WHERE id = ?")
      .bind(row.id)
      .first<any>();
    expect(failed).toMatchObject({
      state: "failed",
      error_message: "The user who started this job no longer has a role in the account.",
      row_count: 10,
    });
    expect((await env.FILES.list({ prefix: `exports/${row.id}/` })).objects).toHaveLength(0);
  });
});
