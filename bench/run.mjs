#!/usr/bin/env node
// `npm run bench`: starts the service and a floor Worker on the local Workers runtime
// (wrangler dev, local bindings, fresh state and fresh secrets), seeds data through the API,
// drives both with autocannon, and prints one table: figures with their targets, then
// diagnostics, each under a stable dotted id. Results also go to bench/results.json. Figures
// are ratios against the floor measured in the same run, or times, so a slow or busy machine
// moves both sides together. A figure or diagnostic that cannot be measured fails the run
// (exit code 1, listed by id); an unmet target is printed as NO (exit code 1 only with
// BENCH_STRICT=1). See bench/README.md.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  apiClient,
  createWorkers,
  loadGenerator,
  log,
  MAX_IN_FLIGHT,
  makeAccount,
  seedTasks,
  workerdPids,
} from "./lib/harness.mjs";
import { createReport } from "./lib/report.mjs";
import { freshSecrets } from "./lib/secrets.mjs";
import { appSection } from "./sections/app.mjs";
import { autoAssignSection } from "./sections/autoassign.mjs";
import { batch, read, single } from "./sections/commands.mjs";
import { consoleSection } from "./sections/console.mjs";
import { exportsImports } from "./sections/exports.mjs";
import { list, orders } from "./sections/lists.mjs";
import { live } from "./sections/live.mjs";
import { optimize } from "./sections/optimize.mjs";
import { pod } from "./sections/pod.mjs";
import { positionsSection } from "./sections/positions.mjs";
import { recurrences } from "./sections/recurrences.mjs";
import { replan } from "./sections/replan.mjs";
import { roundTrips } from "./sections/round-trips.mjs";
import { storage } from "./sections/storage.mjs";
import { upload } from "./sections/upload.mjs";
import { webhooks } from "./sections/webhooks.mjs";

/** Every section, in the order it runs; `BENCH_ONLY=1,2,3` picks some by number. */
const SECTIONS = [
  read,
  single,
  batch,
  orders,
  list,
  upload,
  webhooks,
  optimize,
  pod,
  exportsImports,
  recurrences,
  live,
  storage,
  roundTrips,
  consoleSection,
  appSection,
  positionsSection,
  replan,
  autoAssignSection,
];

// BENCH_QUICK=1: a short form of every section (CI); any BENCH_* setting still wins.
const quick = process.env.BENCH_QUICK === "1";
const num = (name, full, short) => Number(process.env[name] || (quick ? short : full));
const settings = {
  seconds: num("BENCH_SECONDS", 5, 2),
  // The service and its floor are measured in turns of seconds/slices (see loadGenerator).
  slices: num("BENCH_SLICES", 5, 2),
  warmup: Number(process.env.BENCH_WARMUP ?? 1),
  connections: Math.max(1, Math.min(MAX_IN_FLIGHT, num("BENCH_CONNECTIONS", 10, 10))),
  batches: num("BENCH_BATCHES", 40, 8),
  bigTasks: num("BENCH_BIG_TASKS", 100_000, 5_000),
  uploads: Math.max(2, num("BENCH_UPLOADS", 5, 3)),
  exportTasks: num("BENCH_EXPORT_TASKS", 100_000, 5_000),
  importOrders: num("BENCH_IMPORT_ORDERS", 10_000, 500),
  recurrences: num("BENCH_RECURRENCES", 1000, 50),
  liveClients: num("BENCH_LIVE_CLIENTS", 1000, 200),
  liveIdleSeconds: num("BENCH_LIVE_IDLE_SECONDS", 20, 12),
  storageTasks: num("BENCH_STORAGE_TASKS", 200, 50),
  positionWorkers: num("BENCH_POSITION_WORKERS", 100, 20),
  consoleWorkers: num("BENCH_CONSOLE_WORKERS", 500, 100),
  // The solver's budget in section 8, for the service and for the offline solve of the same instance.
  optimizationIterations: num("BENCH_OPTIMIZATION_ITERATIONS", 20_000, 20_000),
  only: process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(",").map(Number) : null,
  quick,
};
const chosen = SECTIONS.filter((s) => !settings.only || settings.only.includes(s.n));
if (settings.only?.some((n) => !SECTIONS.some((s) => s.n === n)))
  throw new Error(`BENCH_ONLY: no section ${settings.only.join(",")} (1..${SECTIONS.length})`);

const report = createReport();
const state = mkdtempSync(join(tmpdir(), "fd-bench-"));
const workers = createWorkers(state);
process.on("exit", () => rmSync(state, { recursive: true, force: true }));
process.on("exit", () => workers.stopAll());
process.on("SIGINT", () => process.exit(130));

async function main() {
  log("state in", state, quick ? "(quick form)" : "");
  for (const s of chosen) report.promise(s.name, s.ids);
  const svcVars = {
    ...freshSecrets(),
    ALLOW_SIGNUP: "true",
    WEBHOOKS_ALLOW_PRIVATE: "true",
    // One token drives all the load: the limit is raised out of the way, but the count still
    // runs on every request (leased from its Durable Object), so its cost is in the figures.
    RATE_LIMIT_PER_SECOND: "1000000",
    // The live section's thousand dispatch screens are one token's: the per-user cap on open
    // streams (default 50) is raised for them, the per-account one (2,000) left as it is.
    LIVE_STREAMS_PER_USER: "5000",
    ROUTE_OPTIMIZATION_ITERATIONS: String(settings.optimizationIterations),
    // Each answer says its sequential D1 round trips (section 14); one header, no other cost.
    EXPOSE_D1_ROUND_TRIPS: "true",
  };
  workers.migrate("svc");
  // GET /__scheduled runs the cron handler on demand (section 11).
  const svcWorker = await workers.start("svc", "wrangler.jsonc", svcVars, ["--test-scheduled"]);
  const floorWorker = await workers.start("floor", "bench/floor/wrangler.jsonc", {});
  const setup = await fetch(`${floorWorker.url}/setup`);
  if (!setup.ok) throw new Error(`floor setup: ${setup.status}`);
  const api = apiClient(svcWorker.url);
  const svc = { url: svcWorker.url, pids: () => workerdPids(svcWorker.pid) };
  const floor = { url: floorWorker.url, pids: () => workerdPids(floorWorker.pid) };

  // The account most sections use: 1,000 tasks, half of them assigned to its worker.
  const small = await makeAccount(api, "small");
  await seedTasks(api, small, 1000);
  const page = await api("/tasks/?page_size=100", { token: small.token });
  const taskIds = (page.body?.results ?? []).map((t) => t.id);
  if (taskIds.length !== 100) throw new Error(`GET /tasks/: ${page.status} ${page.text.slice(0, 300)}`);

  const { run, turns } = loadGenerator(settings);
  const ctx = {
    api,
    svc,
    floor,
    run,
    turns,
    report,
    small,
    taskIds,
    settings,
    workers,
    svcVars,
    state,
  };
  for (const s of chosen) {
    try {
      await s.run(ctx);
    } catch (err) {
      log(`section ${s.n} (${s.name}) failed:`, err);
      report.failed(s.name, err instanceof Error ? err.message : err);
    }
  }
}

function finish() {
  const { quick: _q, ...shown } = settings;
  const results = report.json({ ...shown, quick });
  writeFileSync("bench/results.json", `${JSON.stringify(results, null, 2)}\n`);
  report.print();
  const missing = results.unmeasured;
  if (missing.length) {
    console.log(`\nNOT MEASURED (the run fails): ${missing.map((m) => m.id).join(", ")}`);
    for (const m of missing) console.log(`  ${m.id}: ${m.reason}`);
    process.exitCode = 1;
  }
  const unmet = results.figures.filter((f) => f.met === false);
  if (unmet.length) {
    console.log(`\ntargets not met: ${unmet.map((f) => f.id).join(", ")}`);
    if (process.env.BENCH_STRICT === "1") process.exitCode = 1;
  }
}

main()
  .catch((err) => {
    // The service or the floor did not start, or the shared seeding failed: every promised id
    // is unmeasured.
    console.error(err);
    for (const s of chosen) report.failed(s.name, err instanceof Error ? err.message : err);
  })
  .finally(() => {
    finish();
    workers.stopAll();
    setTimeout(() => process.exit(), 500);
  });
