#!/usr/bin/env node
// `npm run bench:profile -- <target> [requests]`: a CPU profile of the service's Worker (its
// isolate: the routes, the Durable Objects, D1's client side) while it answers one kind of
// request, through the runtime's devtools inspector (the Chrome DevTools Protocol's `Profiler`),
// as the bench's own setup seeds it. Prints the functions with the most self and total time per
// request and writes the profile (open it in a browser's devtools, Performance tab).
//
//   task         GET /tasks/{id}/ of the bench's first task (section 1)
//   deep         GET /tasks/{id}/ of a task with 200 stops before it (section 1's deep read)
//   auto-assign  POST /tasks/auto_assign/ of one new task into 50 routes of 40 stops (section 19)
//
// Times are inflated by the inspector (a console.log costs ~1.5 ms with it attached, see
// bench/README.md): compare shares and before/after, never against the bench's figures.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiClient, byRouteOrder, createWorkers, makeAccount, seedTasks } from "./lib/harness.mjs";
import { freshSecrets } from "./lib/secrets.mjs";
import { autoAssignDay } from "./sections/autoassign.mjs";

const [target = "task", count = "500"] = process.argv.slice(2);
const N = Number(count);
if (!["task", "deep", "auto-assign"].includes(target) || !(N > 0))
  throw new Error("usage: npm run bench:profile -- task|deep|auto-assign [requests]");

const state = mkdtempSync(join(tmpdir(), "fd-profile-"));
const workers = createWorkers(state);
process.on("exit", () => workers.stopAll());
const PORT = Number(process.env.BENCH_INSPECTOR_PORT || 9331);
workers.migrate("svc");
const svc = await workers.start(
  "svc",
  "wrangler.jsonc",
  { ...freshSecrets(), ALLOW_SIGNUP: "true", RATE_LIMIT_PER_SECOND: "1000000" },
  [],
  { BENCH_INSPECTOR: "1", BENCH_INSPECTOR_PORT: String(PORT) },
);
const api = apiClient(svc.url);

/** One request of the target, answered 2xx or the run stops. */
let request;
if (target === "auto-assign") {
  const { admin, newTask } = await autoAssignDay(api);
  const tasks = [];
  for (let i = 0; i < N + 20; i++) tasks.push((await newTask(i % 50)).url);
  request = async () => {
    const r = await api("/tasks/auto_assign/", { token: admin, body: { tasks: [tasks.shift()] } });
    if (r.status !== 200) throw new Error(`POST /tasks/auto_assign/: ${r.status} ${r.text.slice(0, 200)}`);
  };
} else {
  const small = await makeAccount(api, "small");
  await seedTasks(api, small, 1000);
  const mine = await api(`/tasks/?assignee=${encodeURIComponent(small.worker.url)}&page_size=500`, {
    token: small.token,
  });
  // The worker's order (domain/route-order): the first task, or the last one.
  const chain = mine.body.results.sort(byRouteOrder);
  const id = target === "deep" ? chain[Math.min(200, chain.length - 1)].id : chain[0].id;
  request = async () => {
    const r = await api(`/tasks/${id}/`, { token: small.token });
    if (r.status !== 200) throw new Error(`GET /tasks/${id}/: ${r.status}`);
  };
}

// The inspector's proxy takes a devtools client only with an Origin header of its own host.
const [page] = await (await fetch(`http://127.0.0.1:${PORT}/json`)).json();
const ws = new WebSocket(page.webSocketDebuggerUrl, { headers: { Origin: `http://127.0.0.1:${PORT}` } });
await new Promise((resolve, reject) => {
  ws.onopen = resolve;
  ws.onerror = () => reject(new Error(`no devtools session at ${page.webSocketDebuggerUrl}`));
});
const pending = new Map();
let seq = 0;
ws.onmessage = (e) => {
  const m = JSON.parse(String(e.data));
  pending.get(m.id)?.(m);
  pending.delete(m.id);
};
const send = (method, params = {}) =>
  new Promise((resolve) => {
    pending.set(++seq, resolve);
    ws.send(JSON.stringify({ id: seq, method, params }));
  });

for (let i = 0; i < 20; i++) await request(); // the isolate warmed up, not profiled
await send("Profiler.enable");
await send("Profiler.setSamplingInterval", { interval: 100 });
await send("Profiler.start");
for (let i = 0; i < N; i++) await request();
const { result } = await send("Profiler.stop");
const profile = result.profile;
const file = join(tmpdir(), `fd-${target}.cpuprofile`);
writeFileSync(file, JSON.stringify(profile));

// Self time per function, and total time (each function once per sample's stack).
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const name = ({ functionName, url, lineNumber }) =>
  `${functionName || "(anonymous)"} ${url.split("/").pop()}:${lineNumber + 1}`;
const self = new Map();
const total = new Map();
profile.samples.forEach((node, i) => {
  const us = profile.timeDeltas[i] ?? 0;
  const key = name(byId.get(node).callFrame);
  self.set(key, (self.get(key) ?? 0) + us);
  const seen = new Set();
  for (let cur = node; cur !== undefined; cur = parent.get(cur)) {
    const k = name(byId.get(cur).callFrame);
    if (!seen.has(k)) total.set(k, (total.get(k) ?? 0) + us);
    seen.add(k);
  }
});
const top = (m, k) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([f, us]) => `${(us / N / 1000).toFixed(3).padStart(8)} ms  ${f}`)
    .join("\n");
console.log(`${target}: ${N} requests; per request, self time:\n${top(self, 25)}`);
console.log(`\ntotal time:\n${top(total, 40)}`);
console.log(`\nprofile: ${file}`);
process.exit(0);
