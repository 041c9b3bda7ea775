#!/usr/bin/env node
// Storage per delivered task (issue "Storage that stays bounded", contract §23): what one task
// leaves behind in D1 once it is created, assigned, accepted, in transit, active and completed,
// with one webhook subscribed to every event and every delivery made. Measured with SQLite's
// dbstat on the local D1 file of a fresh local service, before and after N such tasks, per
// table and index; then again after the events and deliveries windows have passed (the cron
// run with its clock moved on). Run alone (`node bench/storage.mjs`) or from bench/run.mjs.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { apiClient, createWorkers } from "./lib/harness.mjs";
import { freshSecrets } from "./lib/secrets.mjs";

const log = (...a) => console.error("[storage]", ...a);
const rand = (n) => randomBytes(n).toString("base64url");

/**
 * A local D1 file opened for the bench, waiting up to 15 s for a lock (SQLite's busy_timeout):
 * with the directory and two shards, the runtime may still be finishing a write to one of them
 * when the bench reads or rewrites it, and SQLite answers "database is locked" at once otherwise.
 */
export function openWaiting(file, options = {}) {
  const db = new DatabaseSync(file, options);
  db.exec("PRAGMA busy_timeout = 15000");
  return db;
}

/** SQLite files of the local D1 databases under a wrangler persist directory. */
export function d1Files(persistDir) {
  const dir = join(persistDir, "v3", "d1", "miniflare-D1DatabaseObject");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".sqlite"))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).size - statSync(a).size);
}

/** Bytes per table and index (dbstat pages, free space in them included), summed over `files`. */
export function dbstat(files) {
  const out = {};
  for (const file of files) {
    const db = openWaiting(file, { readOnly: true });
    try {
      for (const r of db.prepare("SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name").all())
        out[r.name] = (out[r.name] ?? 0) + Number(r.bytes);
    } finally {
      db.close();
    }
  }
  return out;
}

const sum = (o) => Object.values(o).reduce((a, b) => a + b, 0);
export const diff = (after, before) =>
  Object.fromEntries(
    Object.keys({ ...after, ...before })
      .map((k) => [k, (after[k] ?? 0) - (before[k] ?? 0)])
      .filter(([, v]) => v !== 0),
  );

/**
 * `n` delivered tasks through the API of the service at `base`: created, assigned, accepted,
 * in transit, active, completed, with a webhook on every event that a local receiver answers.
 * Resolves once every delivery succeeded.
 */
export async function deliverTasks({ api, n, receiverPort }) {
  const email = `storage-${rand(6)}@example.test`;
  const password = "storage-bench-123";
  const signUp = await api("/accounts/", { body: { name: "Storage", email, password } });
  if (signUp.status !== 201) throw new Error(`sign-up ${signUp.status} ${signUp.text}`);
  const token = (await api("/authenticate/", { body: { username: email, password } })).body.token;
  const worker = await api("/users/", {
    token,
    body: { email: `w-${email}`, name: "Aino Virtanen", password, role: "worker" },
  });
  const wtoken = (await api("/authenticate/", { body: { username: `w-${email}`, password } })).body.token;
  const hook = await api("/webhooks/", { token, body: { url: `http://127.0.0.1:${receiverPort}/hook` } });
  if (hook.status !== 201) throw new Error(`webhook ${hook.status} ${hook.text}`);
  const tasks = [];
  for (let i = 0; i < n; i++) {
    const t = await api("/tasks/", {
      token,
      body: {
        account: signUp.body.url,
        category: "drop_off",
        address: {
          raw_address: `Mannerheimintie ${i + 1}, Helsinki`,
          location: { type: "Point", coordinates: [24.93 + i * 1e-4, 60.17] },
        },
        contact: { name: `Recipient ${i}`, phones: ["+358401234567"], emails: ["r@example.test"] },
        complete_after: "2030-06-01T09:00:00Z",
        complete_before: "2030-06-01T17:00:00Z",
        description: "Parcel, leave at the door",
      },
    });
    if (t.status !== 201) throw new Error(`task ${t.status} ${t.text}`);
    tasks.push(t.body);
  }
  const command = (task, action, extra = {}) => ({
    task: task.url,
    external_id: `${action}-${task.id}`,
    time: new Date().toISOString(),
    action,
    ...extra,
  });
  const post = async (tok, body) => {
    const r = await api("/task_commands/", { token: tok, body });
    if (r.status >= 300) throw new Error(`commands ${r.status} ${r.text.slice(0, 300)}`);
    for (const c of Array.isArray(r.body) ? r.body : [r.body])
      if (c.state !== "accepted") throw new Error(`command ${c.action}: ${c.error_message}`);
  };
  for (const t of tasks) await post(token, command(t, "assign", { assignee: worker.body.url }));
  for (const t of tasks) {
    // One task at a time in transit/active (the worker's limit is 1), as a driver works.
    await post(wtoken, [
      command(t, "accept"),
      command(t, "transit"),
      command(t, "activate"),
      command(t, "complete", { location: { type: "Point", coordinates: [24.93, 60.17] } }),
    ]);
  }
  return { token, hookId: hook.body.id, accountUrl: signUp.body.url };
}

/** A webhook receiver that answers 204 to everything and counts what it got. */
export function receiver() {
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      count++;
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, port: server.address().port, count: () => count })),
  );
}

/** Rows of `tables` in the local D1 files (read-only). */
export function countRows(files, tables) {
  let n = 0;
  for (const file of files) {
    const db = openWaiting(file, { readOnly: true });
    try {
      for (const t of tables) {
        try {
          n += Number(db.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get().n);
        } catch {}
      }
    } finally {
      db.close();
    }
  }
  return n;
}

/**
 * Runs the cron with its clock moved to `time` (wrangler dev --test-scheduled, `?time=` in ms)
 * until `left()` (rows still to archive) is 0 or stops moving. Returns the runs, the wall ms,
 * and `activeMs`, until the rows last moved (the rows are polled every 100 ms).
 */
export async function cronAt(base, time, left, maxRuns = 200) {
  const t0 = performance.now();
  let runs = 0;
  let before = left();
  // When the rows last moved: the time the work took, without the wait that saw it stop.
  let moved = t0;
  while (runs < maxRuns && before > 0) {
    const r = await fetch(`${base}/cdn-cgi/local/scheduled?cron=*+*+*+*+*&time=${time}`);
    await r.text();
    runs++;
    // The handler's work runs after its answer (waitUntil): wait for the rows to stop moving.
    let now = before;
    for (let i = 0; i < 600; i++) {
      await new Promise((res) => setTimeout(res, 100));
      const n = left();
      if (n !== now) moved = performance.now();
      if (n === now && i > 5) break;
      now = n;
    }
    if (now === before) break;
    before = now;
  }
  return { runs, ms: performance.now() - t0, activeMs: moved - t0, left: left() };
}

/** Waits until the webhook's deliveries are all done (none pending), via the delivery log. */
export async function settleDeliveries(api, token, hookId, timeoutMs = 600_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const r = await api(`/webhooks/${hookId}/deliveries/?state=pending&page_size=1`, { token });
    if (r.status === 200 && r.body.results.length === 0) return;
    await new Promise((res) => setTimeout(res, 500));
  }
  throw new Error("webhook deliveries did not finish");
}

export function summarize(label, perTask) {
  const rows = Object.entries(perTask)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `  ${k.padEnd(44)} ${(v / 1024).toFixed(2).padStart(8)} KB`);
  log(`${label}: ${(sum(perTask) / 1024).toFixed(2)} KB per task`);
  for (const r of rows) log(r);
}

export { sum };

// Standalone: one fresh server (the bench's harness: fresh secrets, free port, no devtools),
// N tasks, the per-table breakdown.
if (import.meta.url === `file://${process.argv[1]}`) {
  const N = Number(process.env.STORAGE_TASKS || 200);
  const state = mkdtempSync(join(tmpdir(), "fd-storage-"));
  const persist = join(state, "svc");
  const workers = createWorkers(state);
  process.on("exit", () => {
    workers.stopAll();
    // STORAGE_KEEP=1 leaves the local D1 files behind to look at (the path is printed).
    if (process.env.STORAGE_KEEP) log(`kept ${persist}`);
    else rmSync(state, { recursive: true, force: true });
  });
  workers.migrate("svc");
  const vars = {
    ...freshSecrets(),
    ALLOW_SIGNUP: "true",
    WEBHOOKS_ALLOW_PRIVATE: "true",
    RATE_LIMIT_PER_SECOND: "0",
  };
  const { url: base } = await workers.start("svc", "wrangler.jsonc", vars, ["--test-scheduled"]);
  const api = apiClient(base);
  const hooks = await receiver();
  const before = dbstat(d1Files(persist));
  const run = await deliverTasks({ api, n: N, receiverPort: hooks.port });
  await settleDeliveries(api, run.token, run.hookId);
  const after = dbstat(d1Files(persist));
  const per = Object.fromEntries(Object.entries(diff(after, before)).map(([k, v]) => [k, v / N]));
  summarize(`hot, ${N} tasks, ${hooks.count()} deliveries`, per);
  if (process.env.STORAGE_KEEP) process.exit(0); // the hot rows stay to be looked at
  // Cold: the events and deliveries windows passed (the cron's clock moved 31 days on).
  const files = d1Files(persist);
  const cron = await cronAt(base, Date.now() + 31 * 86_400_000, () =>
    countRows(files, ["events", "webhook_deliveries"]),
  );
  const cold = dbstat(d1Files(persist));
  const perCold = Object.fromEntries(Object.entries(diff(cold, before)).map(([k, v]) => [k, v / N]));
  summarize(`cold (${cron.runs} cron runs, ${Math.round(cron.ms)} ms, ${cron.left} rows left)`, perCold);
  hooks.server.close();
  process.exit(0);
}
