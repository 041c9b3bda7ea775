import { env } from "cloudflare:workers";
import type { ExportMessage } from "../../src/queues/exports/message";
import { call, expectStatus, type TestAccount } from "../helpers";
import { stored } from "../stored";

/** Polls an export (or import) until it is final. */
export async function finished(acc: TestAccount, url: string) {
  for (let i = 0; i < 300; i++) {
    const r = await call(url, { token: acc.admin.token });
    expectStatus(r, 200);
    if (r.body.state === "completed" || r.body.state === "failed") return r.body;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`${url} did not finish`);
}

export async function exportFile(acc: TestAccount, path: string, body: Record<string, unknown>) {
  const r = await call(path, { token: acc.admin.token, body: { account: acc.account.url, ...body } });
  expectStatus(r, 202);
  const done = await finished(acc, r.body.url);
  if (done.state !== "completed") throw new Error(`export failed: ${done.error_message}`);
  const file = await call(done.file);
  expectStatus(file, 200);
  return { export: done, text: file.text, headers: file.headers };
}

/** A queue that keeps what is sent, so a test can deliver the steps itself. */
export class CapturingQueue {
  sent: ExportMessage[] = [];
  async send(m: ExportMessage) {
    this.sent.push(m);
  }
  async sendBatch(ms: { body: ExportMessage }[]) {
    for (const m of ms) this.sent.push(m.body);
  }
}

/** The test environment with some settings and the exports queue replaced. */
export function envWith(vars: Record<string, string>, queue: CapturingQueue): Env {
  return {
    ...env,
    ...vars,
    EXPORTS_QUEUE: queue as unknown as Queue,
    IMPORTS_QUEUE: queue as unknown as Queue,
  } as Env;
}

/** Inserts `n` tasks straight into D1 (one batch), `size` bytes of description each. */
export async function insertTasks(accountId: string, n: number, size: number) {
  const base = Date.now();
  const ids: string[] = [];
  const statements = [];
  for (let i = 0; i < n; i++) {
    const id = crypto.randomUUID();
    ids.push(id);
    statements.push(
      stored
        .prepare(
          `INSERT INTO tasks (id, account_id, state, category, description, address, contact, created_at, updated_at)
         VALUES (?, ?, 'unassigned', 'drop_off', ?, '{"raw_address":"Tallinn"}', '{}', ?, ?)`,
        )
        .bind(id, accountId, `${i}:`.padEnd(size, "x"), base + i, base + i),
    );
  }
  for (let i = 0; i < statements.length; i += 200) await stored.batch(statements.slice(i, i + 200));
  return ids;
}
