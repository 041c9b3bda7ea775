import { describe, expect, it } from "vitest";
import type { ImportMessage } from "../../src/queues/imports/message";
import { jobPrincipal } from "../../src/services/auth/job-principal";
import { createImport } from "../../src/services/imports";
import { FileProblem, failImport, runImportStep } from "../../src/services/imports/apply";
import { CapturingQueue, envWith } from "../exports/support";
import { BASE, call, newAccount, type TestAccount } from "../helpers";
import { scopedTo, stored, withDb } from "../stored";
import { csv, listAll, upload } from "./support";

/** An import whose steps the test delivers itself (the queue is replaced). */
async function start(acc: TestAccount, kind: "tasks" | "orders", text: string, vars: Record<string, string>) {
  const fu = await upload(acc, text);
  const queue = new CapturingQueue();
  const e = await scopedTo(acc.account.id, envWith(vars, queue));
  const p = await jobPrincipal(stored, acc.account.id, acc.admin.userId);
  const row = await createImport(e, p, { kind, file: fu.url }, { zone: null, baseUrl: BASE });
  return { queue, e, row, next: () => queue.sent.shift() as unknown as ImportMessage };
}

const read = (acc: TestAccount, id: string) =>
  call(`/imports/${id}/`, { token: acc.admin.token }).then((r) => r.body);

describe("import steps (contract §21)", () => {
  it("a chunk redelivered after a crash before its commit applies no row twice, counts stay right", async () => {
    const acc = await newAccount();
    const rows = [["category", "address.raw_address", "description"]];
    for (let i = 0; i < 7; i++) rows.push(["drop_off", "Tallinn", `t${i}`]);
    const { e, row, next } = await start(acc, "tasks", csv(rows), {
      IMPORT_CHUNK_SIZE: "3",
      IMPORT_CHUNKS_PER_STEP: "1",
    });
    await runImportStep(e, next()); // staging
    expect(await read(acc, row.id)).toMatchObject({ state: "running", total_rows: 7, processed_rows: 0 });
    await runImportStep(e, next()); // rows 2-4
    expect(await read(acc, row.id)).toMatchObject({ processed_rows: 3, created: 3 });
    // The next chunk's rows are applied, then the commit fails.
    let failures = 1;
    const crashing = withDb(
      e,
      new Proxy(e.DB, {
        get(target, prop) {
          if (prop !== "prepare") {
            const v = Reflect.get(target, prop);
            return typeof v === "function" ? v.bind(target) : v;
          }
          return (sql: string) => {
            if (sql.includes("UPDATE data_imports SET cursor") && failures-- > 0) throw new Error("crash");
            return target.prepare(sql);
          };
        },
      }),
    );
    const msg = next();
    await expect(runImportStep(crashing, msg)).rejects.toThrow("crash");
    expect(await listAll(acc, `/tasks/?task_import=${row.id}`)).toHaveLength(6);
    await runImportStep(e, msg); // the redelivery
    await runImportStep(e, msg); // and a stale duplicate
    for (let m = next(); m; m = next()) await runImportStep(e, m);
    const done = await read(acc, row.id);
    expect(done).toMatchObject({ state: "completed", processed_rows: 7, created: 7, failed: 0 });
    const tasks = await listAll(acc, `/tasks/?task_import=${row.id}`);
    expect(tasks.map((t: any) => t.description).sort()).toEqual(["t0", "t1", "t2", "t3", "t4", "t5", "t6"]);
  });

  it("an orders chunk replayed writes the same orders and tasks once, still counted as created", async () => {
    const acc = await newAccount();
    const rows = [["order.external_id", "category", "address.raw_address"]];
    for (let i = 0; i < 4; i++) rows.push([`O-${i}`, "pick_up", "A"], [`O-${i}`, "drop_off", "B"]);
    const { e, row, next } = await start(acc, "orders", csv(rows), {
      IMPORT_CHUNK_SIZE: "2",
      IMPORT_CHUNKS_PER_STEP: "1",
    });
    await runImportStep(e, next());
    const msg = next();
    // Apply the first chunk, then roll the import's progress back as if the commit was lost.
    await runImportStep(e, msg);
    await stored
      .prepare(
        "UPDATE data_imports SET cursor = 0, processed_rows = 0, created = 0, updated = 0 WHERE id = ?",
      )
      .bind(row.id)
      .run();
    next(); // the continuation of the lost commit never went out
    await runImportStep(e, msg);
    for (let m = next(); m; m = next()) await runImportStep(e, m);
    expect(await read(acc, row.id)).toMatchObject({
      state: "completed",
      created: 4,
      updated: 0,
      processed_rows: 8,
    });
    expect(await listAll(acc, "/orders/")).toHaveLength(4);
    expect(await listAll(acc, "/tasks/")).toHaveLength(8);
  });

  it("more rows than MAX_IMPORT_ROWS: failed with a clear error, nothing applied", async () => {
    const acc = await newAccount();
    const rows = [["category", "address.raw_address"]];
    for (let i = 0; i < 4; i++) rows.push(["drop_off", "A"]);
    const { e, row, next } = await start(acc, "tasks", csv(rows), { MAX_IMPORT_ROWS: "3" });
    const msg = next();
    const err = await runImportStep(e, msg).catch((x) => x);
    expect(err).toBeInstanceOf(FileProblem);
    await failImport(e, msg, err.message, err.error);
    const done = await read(acc, row.id);
    expect(done).toMatchObject({
      state: "failed",
      error_message: "The file has more than 3 rows (MAX_IMPORT_ROWS); nothing was imported.",
      errors: [{ row: 5, field: null, message: "Row limit of 3 rows exceeded." }],
      created: 0,
    });
    expect(await listAll(acc, "/tasks/")).toHaveLength(0);
    const staged = await stored
      .prepare("SELECT COUNT(*) AS n FROM import_rows WHERE import_id = ?")
      .bind(row.id)
      .first<{ n: number }>();
    expect(staged!.n).toBe(0);
  });
});
