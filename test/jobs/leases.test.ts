import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseCsv } from "../../src/formats/csv";
import type { ImportMessage } from "../../src/queues/imports/message";
import { jobPrincipal } from "../../src/services/auth/job-principal";
import { createExport } from "../../src/services/exports";
import { sweepExpiredExportFiles } from "../../src/services/exports/lifecycle";
import { runExportStep } from "../../src/services/exports/run";
import { createImport } from "../../src/services/imports";
import { runImportStep } from "../../src/services/imports/apply";
import { DEFAULT_JOB_LEASE_SECONDS } from "../../src/services/jobs/lease";
import { sweepJobLeases } from "../../src/services/jobs/sweep";
import { CapturingQueue, envWith, finished, insertTasks } from "../exports/support";
import { BASE, call, expectStatus, newAccount, type TestAccount } from "../helpers";
import { csv, listAll, upload } from "../imports/support";
import { scopedTo, stored } from "../stored";

afterEach(() => vi.useRealTimers());

const LAPSED = (DEFAULT_JOB_LEASE_SECONDS + 1) * 1000;

/** An export whose queue messages go nowhere until the test hands them on (or drops them). */
async function lostExport(acc: TestAccount, rows: number) {
  const ids = await insertTasks(acc.account.id, rows, 20);
  const queue = new CapturingQueue();
  const e = await scopedTo(
    acc.account.id,
    envWith({ EXPORT_PAGE_SIZE: "4", EXPORT_PAGES_PER_STEP: "1" }, queue),
  );
  const p = await jobPrincipal(stored, acc.account.id, acc.admin.userId);
  const row = await createExport(
    e,
    p,
    "tasks",
    { account: acc.account.url, fields: ["id", "description"] },
    { zone: null, baseUrl: BASE },
  );
  return { ids, queue, e, row };
}

async function lostImport(acc: TestAccount, n: number) {
  const rows = [["category", "address.raw_address", "description"]];
  for (let i = 0; i < n; i++) rows.push(["drop_off", "Tallinn", `t${i}`]);
  const fu = await upload(acc, csv(rows));
  const queue = new CapturingQueue();
  const e = await scopedTo(
    acc.account.id,
    envWith({ IMPORT_CHUNK_SIZE: "3", IMPORT_CHUNKS_PER_STEP: "1" }, queue),
  );
  const p = await jobPrincipal(stored, acc.account.id, acc.admin.userId);
  const row = await createImport(e, p, { kind: "tasks", file: fu.url }, { zone: null, baseUrl: BASE });
  return { queue, e, row, next: () => queue.sent.shift() as unknown as ImportMessage };
}

describe("job leases: a job whose message or consumer is lost finishes or fails, never stays running", () => {
  it("an export whose consumer died after a step is queued again by the cron and writes each row once", async () => {
    const acc = await newAccount();
    const { ids, queue, e, row } = await lostExport(acc, 10);
    await runExportStep(e, queue.sent.shift()!); // one step, then the consumer dies: its next message is lost
    queue.sent.length = 0;
    const midway = await call(`/task_exports/${row.id}/`, { token: acc.admin.token });
    expect(midway.body).toMatchObject({ state: "running", row_count: 4 });
    // Within its lease the job is left alone; past it, the cron re-queues it (on the real queue).
    expect(await sweepJobLeases(env, Date.now())).toMatchObject({ requeued: 0 });
    const swept = await sweepJobLeases(env, Date.now() + LAPSED);
    expect(swept.requeued).toBeGreaterThanOrEqual(1);
    const done = await finished(acc, `/task_exports/${row.id}/`);
    expect(done).toMatchObject({ state: "completed", row_count: 10 });
    const file = await call(done.file);
    expect(
      parseCsv(file.text)
        .slice(1)
        .map((r) => r[0]),
    ).toEqual(ids);
  });

  it("an import whose queue message was lost after staging resumes at its next row, none applied twice", async () => {
    const acc = await newAccount();
    const { e, row, next, queue } = await lostImport(acc, 7);
    await runImportStep(e, next()); // staging
    await runImportStep(e, next()); // rows 2-4, then the message of the next chunk is lost
    queue.sent.length = 0;
    await sweepJobLeases(env, Date.now() + LAPSED);
    const done = await finished(acc, `/imports/${row.id}/`);
    expect(done).toMatchObject({ state: "completed", processed_rows: 7, created: 7, failed: 0 });
    const tasks = await listAll(acc, `/tasks/?task_import=${row.id}`);
    expect(tasks.map((t: any) => t.description).sort()).toEqual(["t0", "t1", "t2", "t3", "t4", "t5", "t6"]);
  });

  it("a job never sent (the send failed after its row was saved) runs once the cron finds it", async () => {
    const acc = await newAccount();
    const { row } = await lostImport(acc, 2); // its first message never left the test's queue
    await sweepJobLeases(env, Date.now() + LAPSED);
    expect(await finished(acc, `/imports/${row.id}/`)).toMatchObject({ state: "completed", created: 2 });
  });

  it("re-queued without progress JOB_MAX_REQUEUES times, the job fails with the reason", async () => {
    const acc = await newAccount();
    const { row } = await lostExport(acc, 3);
    const dropping = envWith({}, new CapturingQueue()); // every message is lost again
    let now = Date.now();
    for (let i = 0; i < 3; i++) {
      now += LAPSED;
      expect(await sweepJobLeases(dropping, now)).toMatchObject({ requeued: 1 });
    }
    now += LAPSED;
    expect(await sweepJobLeases(dropping, now)).toMatchObject({ failed: 1 });
    const r = await call(`/task_exports/${row.id}/`, { token: acc.admin.token });
    expect(r.body.state).toBe("failed");
    expect(r.body.error_message).toMatch(/stopped making progress.*3 times/);
    // The same lapse is never swept twice.
    expect(await sweepJobLeases(dropping, now)).toMatchObject({ requeued: 0, failed: 0 });
  });

  it("route optimizations have leases too: one lost on its way to the solver fails after the re-queues", async () => {
    const acc = await newAccount();
    const id = crypto.randomUUID();
    const now = Date.now();
    await stored
      .prepare(
        `INSERT INTO route_optimizations (id, account_id, state, route_ids, task_ids, created_at, updated_at, lease_expires_at, lease_attempts, base_url)
       VALUES (?, ?, 'queued', '[]', '[]', ?, ?, ?, 3, ?)`,
      )
      .bind(id, acc.account.id, now, now, now, BASE)
      .run();
    expect(await sweepJobLeases(env, now + 1)).toMatchObject({ failed: 1 });
    const r = await call(`/route_optimizations/${id}/`, { token: acc.admin.token });
    expect(r.body).toMatchObject({ state: "failed" });
    expect(r.body.error_message).toMatch(/route optimization stopped making progress/);
  });
});

describe("cancel (exports, imports, route optimizations)", () => {
  it("a cancelled export writes nothing more; a second cancel is 400", async () => {
    const acc = await newAccount();
    const { queue, e, row } = await lostExport(acc, 10);
    const msg = queue.sent.shift()!;
    const r = await call(`/task_exports/${row.id}/cancel/`, { method: "POST", token: acc.admin.token });
    expectStatus(r, 200);
    expect(r.body).toMatchObject({ state: "failed", error_message: "Cancelled.", file: null });
    await runExportStep(e, msg); // the message arrives after all
    expect(queue.sent).toHaveLength(0);
    const after = await call(`/task_exports/${row.id}/`, { token: acc.admin.token });
    expect(after.body).toMatchObject({ state: "failed", row_count: 0 });
    expect((await env.FILES.list({ prefix: `exports/${row.id}/` })).objects).toHaveLength(0);
    const again = await call(`/task_exports/${row.id}/cancel/`, { method: "POST", token: acc.admin.token });
    expectStatus(again, 400);
    expect(again.body.non_field_errors[0]).toBe("This export is already failed.");
  });

  it("a cancelled import keeps the rows it applied and applies no more", async () => {
    const acc = await newAccount();
    const { e, row, next } = await lostImport(acc, 7);
    await runImportStep(e, next()); // staging
    await runImportStep(e, next()); // three rows
    const pending = next();
    const r = await call(`/imports/${row.id}/cancel/`, { method: "POST", token: acc.admin.token });
    expectStatus(r, 200);
    expect(r.body).toMatchObject({ state: "failed", error_message: "Cancelled.", created: 3 });
    await runImportStep(e, pending);
    expect(await listAll(acc, `/tasks/?task_import=${row.id}`)).toHaveLength(3);
    expect((await call(`/imports/${row.id}/`, { token: acc.admin.token })).body.created).toBe(3);
  });

  it("a cancelled route optimization is failed; a finished one cannot be cancelled; workers may not", async () => {
    const acc = await newAccount();
    const route = await call("/routes/", { token: acc.admin.token, body: { name: "R" } });
    const opt = await call("/route_optimizations/", {
      token: acc.admin.token,
      body: { routes: [route.body.url] },
    });
    expectStatus(opt, 202);
    const done = await finished(acc, opt.body.url);
    const r = await call(`/route_optimizations/${done.id}/cancel/`, {
      method: "POST",
      token: acc.admin.token,
    });
    expectStatus(r, 400);
    expect(r.body.non_field_errors[0]).toBe(`This route optimization is already ${done.state}.`);
  });
});

describe("export files (contract §21): signed links, expiry, DELETE", () => {
  async function completedExport(acc: TestAccount) {
    await insertTasks(acc.account.id, 3, 10);
    const r = await call("/task_exports/", { token: acc.admin.token, body: { account: acc.account.url } });
    expectStatus(r, 202);
    return finished(acc, r.body.url);
  }

  it("the file needs its signed link, unexpired and untouched; no CORS", async () => {
    const acc = await newAccount();
    const done = await completedExport(acc);
    const link = new URL(done.file);
    expect(link.searchParams.get("signature")).toMatch(/^[0-9a-f]{64}$/);
    const ok = await call(done.file, { headers: { Origin: "https://evil.example" } });
    expectStatus(ok, 200);
    expect(ok.headers.get("Access-Control-Allow-Origin")).toBeNull();
    expect(ok.headers.get("Cache-Control")).toBe("private, no-store");
    const bare = `${link.origin}${link.pathname}`;
    const denied = await call(bare);
    expectStatus(denied, 403);
    expect(denied.text).toContain("<Code>AccessDenied</Code>");
    const forged = new URL(done.file);
    forged.searchParams.set("expires", String(Number(forged.searchParams.get("expires")) + 3600));
    expectStatus(await call(forged.toString()), 403);
    // Links live 15 minutes; the file 7 days from completion.
    const expires = Number(link.searchParams.get("expires")) * 1000;
    expect(expires - Date.now()).toBeLessThanOrEqual(900_000);
    expect(Date.parse(done.file_expires_at) - Date.parse(done.completed_at)).toBe(7 * 86_400_000);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(expires + 1000);
    const late = await call(done.file);
    expectStatus(late, 403);
    expect(late.text).toContain("Request has expired");
  });

  it("past EXPORT_FILE_TTL_DAYS the cron deletes the file and the export shows no link", async () => {
    const acc = await newAccount();
    const done = await completedExport(acc);
    const key = decodeURIComponent(new URL(done.file).pathname.slice("/files/".length));
    expect(await env.FILES.head(key)).not.toBeNull();
    await sweepExpiredExportFiles(env, Date.parse(done.file_expires_at) - 1000);
    expect(await env.FILES.head(key)).not.toBeNull();
    expect(
      await sweepExpiredExportFiles(env, Date.parse(done.file_expires_at) + 1000),
    ).toBeGreaterThanOrEqual(1);
    expect(await env.FILES.head(key)).toBeNull();
    const r = await call(done.url, { token: acc.admin.token });
    expect(r.body.file).toBeNull();
  });

  it("DELETE removes the export and its file", async () => {
    const acc = await newAccount();
    const done = await completedExport(acc);
    expectStatus(await call(done.file), 200);
    expectStatus(await call(done.url, { method: "DELETE", token: acc.admin.token }), 204);
    expectStatus(await call(done.url, { token: acc.admin.token }), 404);
    const gone = await call(done.file);
    expectStatus(gone, 404);
    expect(gone.text).toContain("NoSuchKey");
  });
});
