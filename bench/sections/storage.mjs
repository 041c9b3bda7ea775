// Section 13: storage per delivered task (contract §23), on a service of its own with fresh local
// state (bench/storage.mjs has the pieces and runs alone too): `storageTasks` tasks (200;
// BENCH_QUICK 50) created, assigned, accepted, in transit, active and completed, one webhook on
// every event with every delivery made; SQLite's dbstat on the local D1 file before and after
// (tables and indexes, free space in their pages included). Then:
// - GET /events/ p50, walking every page, on the events as stored (compressed) and on the same
//   events rewritten as the JSON text stored before compaction (the service stopped, the rows
//   rewritten, the service started again on the same state): "before" and "after" in one run;
// - the cron with its clock moved 31 days on, until the events and deliveries are archived:
//   rows per second, the runtime's CPU ms per cron run, and the bytes per task left (cold).
import { once } from "node:events";
import { join } from "node:path";
import { apiClient, cpuMs, log, percentile, workerdPids } from "../lib/harness.mjs";
import {
  countRows,
  cronAt,
  d1Files,
  dbstat,
  deliverTasks,
  diff,
  openWaiting,
  receiver,
  settleDeliveries,
  sum,
} from "../storage.mjs";

/** D1's limit per database: 10 GB, counted in decimal units (the smaller reading). */
const D1_LIMIT_BYTES = 10e9;
const WALKS = 5;
const USERS = 50;

/** Every page of GET /events/, `walks` times: each request's ms, and the events of one walk. */
async function walkEvents(api, token, walks) {
  const ms = [];
  let events = [];
  for (let w = 0; w < walks; w++) {
    const seen = [];
    let path = "/events/?page_size=100";
    while (path) {
      const t0 = performance.now();
      const r = await api(path, { token });
      ms.push(performance.now() - t0);
      if (r.status !== 200) throw new Error(`GET /events/: ${r.status} ${r.text.slice(0, 300)}`);
      seen.push(...r.body.results);
      path = r.body.next ? new URL(r.body.next).pathname + new URL(r.body.next).search : null;
    }
    events = seen;
  }
  return { ms, events };
}

export const storage = {
  n: 13,
  name: "storage",
  ids: [
    "storage.bytes_per_task_hot",
    "storage.bytes_per_task_cold",
    "storage.tasks_per_10gb_cold",
    "storage.tasks_per_10gb_hot",
    "storage.archive_rows_per_s",
    "storage.cron_cpu_ms_per_run",
    "storage.cron_runs",
    "storage.directory.bytes_per_user",
    "storage.events_list.p50_ms",
    "storage.events_list.p50_ms_before",
    "storage.events_list.p50_ratio",
    "storage.events_per_task",
    "storage.hot.events_bytes_per_task",
    "storage.hot.deliveries_bytes_per_task",
    "storage.hot.commands_bytes_per_task",
    "storage.hot.tasks_bytes_per_task",
  ],
  async run({ workers, svcVars, state, report, settings }) {
    const n = settings.storageTasks;
    const name = "storage";
    const persist = join(state, name);
    workers.migrate(name);
    let w = await workers.start(name, "wrangler.jsonc", { ...svcVars, RATE_LIMIT_PER_SECOND: "0" }, [
      "--test-scheduled",
    ]);
    const stop = async () => {
      const exited = once(w.child, "exit");
      process.kill(-w.child.pid, "SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    };
    const hooks = await receiver();
    try {
      let api = apiClient(w.url);
      const before = dbstat(d1Files(persist));
      const run = await deliverTasks({ api, n, receiverPort: hooks.port });
      await settleDeliveries(api, run.token, run.hookId);
      const hot = diff(dbstat(d1Files(persist)), before);
      const hotPerTask = sum(hot) / n;
      const part = (prefix) =>
        Object.entries(hot)
          .filter(([k]) => k === prefix || k.startsWith(`${prefix}_`) || k === `sqlite_autoindex_${prefix}_1`)
          .reduce((a, [, v]) => a + v, 0) / n;
      log("storage hot", hotPerTask, "bytes per task");

      // GET /events/ as stored, after the settle delay (events younger are not listed yet).
      await new Promise((r) => setTimeout(r, 6000));
      const after = await walkEvents(api, run.token, WALKS);
      const events = after.events;
      if (events.length < n * 5)
        throw new Error(`GET /events/ listed ${events.length} events for ${n} tasks`);

      // The same events as the JSON text stored before compaction, on the same state.
      await stop();
      for (const file of d1Files(persist)) {
        const db = openWaiting(file);
        try {
          const has = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'events'").get();
          if (!has) continue;
          const put = db.prepare(
            "UPDATE events SET payload = ? WHERE account_id = unhex(?, '-') AND id = unhex(?, '-')",
          );
          const account = run.accountUrl.split("/").at(-2);
          db.exec("BEGIN");
          for (const e of events) put.run(JSON.stringify(e.data), account, e.id);
          db.exec("COMMIT");
        } finally {
          db.close();
        }
      }
      w = await workers.start(name, "wrangler.jsonc", { ...svcVars, RATE_LIMIT_PER_SECOND: "0" }, [
        "--test-scheduled",
      ]);
      api = apiClient(w.url);
      const plain = await walkEvents(api, run.token, WALKS);
      const same = JSON.stringify(plain.events) === JSON.stringify(events);
      if (!same) throw new Error("GET /events/ answered differently on JSON text payloads");

      // Cold: the events and deliveries windows passed (the cron's clock 31 days on).
      const files = d1Files(persist);
      const rows = () => countRows(files, ["events", "webhook_deliveries"]);
      const rowsBefore = rows();
      const pids = workerdPids(w.pid);
      const c0 = cpuMs(pids);
      const cron = await cronAt(w.url, Date.now() + 31 * 86_400_000, rows);
      const cpu = cpuMs(pids) - c0;
      if (cron.left !== 0) throw new Error(`${cron.left} rows left after ${cron.runs} cron runs`);
      const cold = sum(diff(dbstat(d1Files(persist)), before)) / n;
      log("storage cold", cold, "bytes per task;", cron);

      // What stays global when accounts spread over shards (docs/scaling.md): a user with its
      // role in the account and one signed-in session, in the tables a directory keeps.
      const GLOBAL =
        /^(users|account_roles|auth_tokens|user_tokens|sign_in_failures)(_|$)|^sqlite_autoindex_(users|account_roles|auth_tokens|user_tokens)_/;
      const u0 = dbstat(d1Files(persist));
      for (let i = 0; i < USERS; i++) {
        const email = `dir-${i}-${Date.now()}@example.test`;
        const made = await api("/users/", {
          token: run.token,
          body: { email, name: `Worker ${i}`, password: "directory-bench-123", role: "worker" },
        });
        if (made.status !== 201) throw new Error(`POST /users/: ${made.status} ${made.text.slice(0, 200)}`);
        const auth = await api("/authenticate/", {
          body: { username: email, password: "directory-bench-123" },
        });
        if (auth.status !== 200) throw new Error(`sign-in: ${auth.status}`);
      }
      const perUser =
        Object.entries(diff(dbstat(d1Files(persist)), u0))
          .filter(([k]) => GLOBAL.test(k))
          .reduce((a, [, v]) => a + v, 0) / USERS;

      report.figure("storage.bytes_per_task_hot", hotPerTask, {
        label: `D1 bytes per delivered task with its events and deliveries (${n} tasks, dbstat)`,
        unit: "B",
        target: "<= 8192",
      });
      report.figure("storage.bytes_per_task_cold", cold, {
        label: "the same after the events and deliveries windows passed (cron, clock +31 days)",
        unit: "B",
        target: "<= 5120",
      });
      report.figure("storage.tasks_per_10gb_cold", D1_LIMIT_BYTES / cold, {
        label: "finished tasks one D1 database (10 GB, decimal) holds, cold",
        unit: "tasks",
        target: ">= 2000000",
      });
      report.diagnostic("storage.tasks_per_10gb_hot", D1_LIMIT_BYTES / hotPerTask, {
        label: "the same, every task still within its windows",
        unit: "tasks",
      });
      report.figure("storage.archive_rows_per_s", (rowsBefore / cron.activeMs) * 1000, {
        label: `events and deliveries archived to R2 and deleted, per second of the cron (${rowsBefore} rows)`,
        unit: "rows/s",
        target: "reference",
      });
      report.figure("storage.cron_cpu_ms_per_run", cpu / cron.runs, {
        label: "runtime CPU ms per cron run while archiving",
        unit: "ms",
        target: "reference",
      });
      report.diagnostic("storage.cron_runs", cron.runs, { label: "cron runs to archive everything" });
      report.diagnostic("storage.directory.bytes_per_user", perUser, {
        unit: "B",
        label: `global rows of a user (user, role, one session; ${USERS} users, dbstat)`,
      });
      const p50 = percentile(after.ms, 50);
      const p50Before = percentile(plain.ms, 50);
      report.figure("storage.events_list.p50_ratio", p50 / p50Before, {
        label: "GET /events/ p50, payloads compressed / the same events as JSON text (before)",
        target: "<= 1.1",
      });
      report.diagnostic("storage.events_list.p50_ms", p50, {
        label: "GET /events/?page_size=100 p50, compressed",
        unit: "ms",
      });
      report.diagnostic("storage.events_list.p50_ms_before", p50Before, {
        label: "the same on JSON text payloads",
        unit: "ms",
      });
      report.diagnostic("storage.events_per_task", events.length / n, { label: "events per delivered task" });
      report.diagnostic("storage.hot.events_bytes_per_task", part("events"), { unit: "B", label: "events" });
      report.diagnostic("storage.hot.deliveries_bytes_per_task", part("webhook_deliveries"), {
        unit: "B",
        label: "webhook deliveries",
      });
      report.diagnostic("storage.hot.commands_bytes_per_task", part("task_commands"), {
        unit: "B",
        label: "task commands with their indexes",
      });
      report.diagnostic("storage.hot.tasks_bytes_per_task", part("tasks"), {
        unit: "B",
        label: "the task with its indexes",
      });
    } finally {
      hooks.server.close();
      await stop().catch(() => undefined);
    }
  },
};
