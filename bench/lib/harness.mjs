// What every section of the bench shares: the two local Workers (the service and the floor),
// calls to the API, load generation, and the runtime's CPU time and memory read from /proc.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import autocannon from "autocannon";
import { unstable_readConfig } from "wrangler";
import { envFileText } from "./secrets.mjs";

export const log = (...a) => console.error("[bench]", ...a);

// Requests in flight are capped: the local runtime runs out of file handles past a few
// thousand open requests and hangs, which measures nothing. autocannon keeps one request per
// connection (no pipelining), so connections are the requests in flight.
export const MAX_IN_FLIGHT = 256;

/** A port nobody listens on now (another engineer's bench may hold the usual ones). */
export async function freePort() {
  const server = net.createServer();
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

export function createWorkers(stateDir) {
  const children = [];
  // The service's ASSETS service binding reaches the static files' Worker (static/wrangler.jsonc)
  // through this registry; started once, before the first service, and shared by every service.
  const registry = join(stateDir, "registry");
  mkdirSync(registry, { recursive: true });
  let staticWorker = null;

  function wrangler(args) {
    return spawnSync("npx", ["wrangler", ...args], { stdio: "ignore", env: { ...process.env, CI: "true" } });
  }

  /**
   * One Worker on a free port (bench/lib/dev-worker.mjs: what `wrangler dev` runs), with fresh
   * local state under `stateDir/name` and its variables from an env file of its own (mode 0600,
   * deleted with the state): wrangler then reads no .dev.vars of the clone, and no secret
   * appears on a command line.
   */
  async function start(name, configPath, vars, extraArgs = [], env = {}) {
    if (configPath === "wrangler.jsonc") {
      staticWorker ??= start("static", "static/wrangler.jsonc", {}).catch((err) => {
        staticWorker = null;
        throw err;
      });
      await staticWorker;
    }
    const port = await freePort();
    const envFile = join(stateDir, `${name}.env`);
    writeFileSync(envFile, envFileText(vars), { mode: 0o600 });
    const child = spawn(
      process.execPath,
      [
        join(import.meta.dirname, "dev-worker.mjs"),
        configPath,
        String(port),
        join(stateDir, name),
        envFile,
        ...extraArgs,
      ],
      {
        stdio: ["ignore", "inherit", "inherit"],
        env: {
          ...process.env,
          CI: "true",
          CLOUDFLARE_CF_FETCH_ENABLED: "false",
          DEV_REGISTRY: registry,
          ...env,
        },
        detached: true,
      },
    );
    children.push(child);
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 240; i++) {
      if (child.exitCode !== null) throw new Error(`${name}: the runtime exited (${child.exitCode})`);
      try {
        await fetch(`${url}/`);
        return { child, url, pid: child.pid };
      } catch {}
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`${name} did not start`);
  }

  /** The service's migrations, on the directory and on every account shard (contract §24). */
  function migrate(name) {
    for (const binding of unstable_readConfig({ config: "wrangler.jsonc" }).d1_databases.map(
      (d) => d.binding,
    )) {
      const r = wrangler([
        "d1",
        "migrations",
        "apply",
        binding,
        "--local",
        "--persist-to",
        join(stateDir, name),
      ]);
      if (r.status !== 0) throw new Error(`migrations of ${name} (${binding}) failed (${r.status})`);
    }
  }

  function stopAll() {
    for (const c of children) {
      try {
        process.kill(-c.pid, "SIGTERM");
      } catch {}
    }
    children.length = 0;
  }

  return { start, migrate, stopAll };
}

/** `send()`, and again after the wait a 429's Retry-After says (RFC 9110 §10.2.3), `retries` times at most. */
export async function sendRetrying429(send, retries) {
  let res = await send();
  for (let i = 0; i < retries && res.status === 429; i++) {
    await new Promise((r) => setTimeout(r, Number(res.headers.get("Retry-After") || 1) * 1000));
    res = await send();
  }
  return res;
}

/**
 * A JSON call to the service: status, parsed body (or null), text and headers. With
 * `retries429`, a 429 is sent again after the wait its Retry-After says, that many times at
 * most, as a client of the API does (the dev server keeps the deployed per-token rate limit).
 */
export function apiClient(base, { retries429 = 0 } = {}) {
  return async function api(path, { method, body, token, headers } = {}) {
    const send = () =>
      fetch(`${base}${path}`, {
        method: method ?? (body ? "POST" : "GET"),
        headers: {
          "Content-Type": "application/json",
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const res = await sendRetrying429(send, retries429);
    const text = await res.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: res.status, body: json, text, headers: res.headers };
  };
}

/** The password of every user the bench makes (its accounts are local and thrown away). */
export const BENCH_PASSWORD = "bench-password-123";

/** A new account through the public sign-up, its admin's token and one field worker. */
export async function makeAccount(api, name) {
  const email = `bench-${name}-${randomBytes(4).toString("hex")}@example.test`;
  const password = BENCH_PASSWORD;
  const r = await api("/accounts/", { body: { name, email, password } });
  if (r.status !== 201) throw new Error(`sign-up: ${r.status} ${r.text}`);
  const auth = await api("/authenticate/", { body: { username: email, password } });
  if (auth.status !== 200) throw new Error(`sign-in: ${auth.status} ${auth.text}`);
  const me = await api("/users/me/", { token: auth.body.token });
  // One field worker: orders with auto_assign give it half of the seeded tasks.
  const worker = await api("/users/", {
    token: auth.body.token,
    body: { email: `worker-${email}`, name: "Bench worker", password, role: "worker" },
  });
  return { account: r.body, token: auth.body.token, user: me.body, worker: worker.body };
}

/**
 * Workers `Driver <from + k>` of `acc` (e-mails `<prefix>-<k>-…`), made `parallel` at a time; with
 * `hijack` each with a session acting as it (contract §14: its positions, without a sign-in per
 * worker). Each is `{id, url, token}` (token null without `hijack`).
 */
export async function addWorkers(api, acc, { prefix, count, from = 0, hijack = false, parallel = 1 }) {
  const one = async (w) => {
    const u = await api("/users/", {
      token: acc.token,
      body: {
        email: `${prefix}-${w}-${acc.user.email}`,
        name: `Driver ${w}`,
        password: BENCH_PASSWORD,
        role: "worker",
      },
    });
    if (u.status !== 201) throw new Error(`POST /users/: ${u.status} ${u.text.slice(0, 300)}`);
    if (!hijack) return { id: u.body.id, url: u.body.url, token: null };
    const h = await api(`/users/${u.body.id}/hijack/`, { method: "POST", token: acc.token });
    if (h.status !== 200) throw new Error(`hijack: ${h.status} ${h.text.slice(0, 300)}`);
    return { id: u.body.id, url: u.body.url, token: h.body.token };
  };
  const made = [];
  for (let w = from; w < from + count; w += parallel)
    made.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(parallel, from + count - w) }, (_, k) => one(w + k)),
      )),
    );
  return made;
}

/**
 * The account's worker roles on duty (all of them, or those of `users`' URLs), with `extra`
 * fields of the role beside (its start and end addresses).
 */
export async function putOnDuty(api, token, { users = null, extra = {} } = {}) {
  let next = "/account_roles/?page_size=500&role=worker";
  while (next) {
    const r = await api(next, { token });
    if (r.status !== 200) throw new Error(`GET /account_roles/: ${r.status} ${r.text.slice(0, 300)}`);
    const mine = r.body.results.filter((role) => !users || users.some((u) => u.url === role.user));
    const patched = await Promise.all(
      mine.map((role) =>
        api(`/account_roles/${role.id}/`, { method: "PATCH", token, body: { on_duty: true, ...extra } }),
      ),
    );
    const bad = patched.find((p) => p.status !== 200);
    if (bad) throw new Error(`PATCH role: ${bad.status} ${bad.text.slice(0, 300)}`);
    next = r.body.next ? new URL(r.body.next).pathname + new URL(r.body.next).search : null;
  }
}

export const taskBody = (i) => ({
  category: i % 2 ? "drop_off" : "pick_up",
  address: { raw_address: ["Tallinn, Estonia", "Paris, France", "Berlin, Germany", "London, UK"][i % 4] },
  contact: { name: `Contact ${i}` },
  description: `bench task ${i}`,
});

/** `total` tasks through the API: orders of up to 500 tasks, 100 orders per call (the contract's limits). */
export async function seedTasks(api, acc, total) {
  const perOrder = 500;
  let made = 0;
  while (made < total) {
    const orders = [];
    while (orders.length < 100 && made < total) {
      const n = Math.min(perOrder, total - made);
      orders.push({
        account: acc.account.url,
        reference: `seed-${made}`,
        auto_assign: orders.length % 2 === 0,
        tasks_data: Array.from({ length: n }, (_, k) => taskBody(made + k)),
      });
      made += n;
    }
    const r = await api("/orders/", { token: acc.token, body: orders });
    if (r.status !== 201) throw new Error(`seed orders: ${r.status} ${r.text.slice(0, 300)}`);
  }
}

/** workerd processes started by one `wrangler dev` child (its descendants). */
export function workerdPids(rootPid) {
  const rows = execFileSync("ps", ["-eo", "pid=,ppid=,comm="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((l) => l.trim().split(/\s+/));
  const kids = new Map();
  for (const [pid, ppid] of rows) kids.set(ppid, [...(kids.get(ppid) ?? []), pid]);
  const out = [];
  const walk = (p) => {
    for (const k of kids.get(String(p)) ?? []) {
      if (rows.find((r) => r[0] === k)?.[2]?.startsWith("workerd")) out.push(Number(k));
      walk(k);
    }
  };
  walk(rootPid);
  return out;
}

/** The p-th percentile (0–100) of `xs`, nearest rank; NaN for none (an unmeasured figure). */
export const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : Number.NaN;
};

export const rssKb = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
  } catch {
    return 0;
  }
};
export const rssOf = (pids) => pids.reduce((a, p) => a + rssKb(p), 0);

/**
 * CPU time (user + system, ms) the runtime's processes have used so far: /proc/<pid>/stat
 * fields 14 and 15, in clock ticks of 10 ms (USER_HZ = 100 on Linux). Less noisy than wall
 * time on a shared machine: another process's load lengthens the run, not our CPU time. NaN
 * when it cannot be read (no /proc), so a figure built on it shows as unmeasured, not as 0.
 */
export const cpuMs = (pids) => {
  if (!pids.length) return Number.NaN;
  return pids.reduce((sum, pid) => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
      return sum + (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      return Number.NaN;
    }
  }, 0);
};

/**
 * Waits until `pids` have used no CPU for `idleMs` (at most `maxMs`), and not before `notBefore`
 * (`performance.now()` time: work set off for later, such as an alarm a few seconds on): the work
 * a request set off after its answer (queues, a Durable Object's alarm, the outbox) has run.
 * Returns the CPU ms read then.
 */
export async function quiet(pids, { idleMs = 60, maxMs = 3000, notBefore = 0 } = {}) {
  const until = Math.max(performance.now(), notBefore) + maxMs;
  let last = cpuMs(pids);
  let since = performance.now();
  while (performance.now() < until) {
    await new Promise((r) => setTimeout(r, 15));
    const now = cpuMs(pids);
    if (now !== last) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= idleMs && performance.now() >= notBefore) break;
  }
  return last;
}

/** What `work` returns, with the wall-clock ms and the CPU ms of `pids` it took. */
export async function timed(pids, work) {
  const c0 = cpuMs(pids);
  const t0 = performance.now();
  const result = await work();
  return { result, ms: performance.now() - t0, cpu: cpuMs(pids) - c0 };
}

/** `count` calls of `send`, `lanes` at a time (a fixed amount of work, to be timed). */
export async function inLanes(lanes, count, send) {
  lanes = Math.min(lanes, MAX_IN_FLIGHT);
  let started = 0;
  const lane = async () => {
    while (started < count) {
      started++;
      await send();
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
}

/** Peak RSS growth (MiB) of `pids` while `send` runs, sampled every `everyMs`. */
export async function peakGrowth(pids, send, everyMs = 10) {
  const base = rssOf(pids);
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssOf(pids));
  }, everyMs);
  try {
    const result = await send();
    return { result, growthMiB: (peak - base) / 1024 };
  } finally {
    clearInterval(timer);
  }
}

export function loadGenerator({ seconds, connections, warmup, slices }) {
  function cannon(opts) {
    return new Promise((resolve, reject) => {
      autocannon({ duration: seconds, connections, ...opts }, (err, res) =>
        err ? reject(err) : resolve(res),
      );
    });
  }
  /**
   * One measured autocannon run, after an unmeasured warm-up of the same requests: JIT
   * compilation and first calls to each Durable Object are paid before the clock starts, on
   * the service and on the floor alike. `cpuPerRequest`: runtime CPU ms per request of `pids`.
   */
  async function run(opts, pids = []) {
    if (warmup > 0) await cannon({ ...opts, duration: warmup });
    const { result: res, cpu } = await timed(pids, () => cannon(opts));
    res.cpuPerRequest = cpu / res.requests.total;
    return res;
  }
  /**
   * Several sides (the service and its floors) measured in turns: each warmed up, then
   * `slices` rounds in which every side runs seconds/slices, in alternating order. A shared
   * machine's load drifts over a run; in turns, every side sees the same drift, so their ratio
   * keeps still where back-to-back runs of a few seconds each do not. Per side: the rate over
   * its measured time, requests and failures summed, runtime CPU per request.
   */
  async function turns(sides) {
    const n = Math.max(1, slices);
    const slice = Math.max(1, Math.round(seconds / n));
    for (const s of sides) if (warmup > 0) await cannon({ ...s.opts, duration: warmup });
    const acc = sides.map(() => ({ total: 0, seconds: 0, non2xx: 0, errors: 0, timeouts: 0, cpu: 0 }));
    for (let r = 0; r < n; r++) {
      const order = r % 2 ? [...sides.keys()].reverse() : [...sides.keys()];
      for (const i of order) {
        const {
          result: res,
          cpu,
          ms,
        } = await timed(sides[i].pids ?? [], () => cannon({ ...sides[i].opts, duration: slice }));
        const a = acc[i];
        a.total += res.requests.total;
        a.seconds += ms / 1000;
        a.non2xx += res.non2xx;
        a.errors += res.errors;
        a.timeouts += res.timeouts;
        a.cpu += cpu;
      }
    }
    return acc.map((a) => ({
      requests: { total: a.total, average: a.total / a.seconds },
      non2xx: a.non2xx,
      errors: a.errors,
      timeouts: a.timeouts,
      cpuPerRequest: a.cpu / a.total,
    }));
  }
  return { run, turns };
}

/** Tasks as the API answers them, in a worker's order (src/domain/route-order): by position, none last, then creation, then id. */
export const byRouteOrder = (a, b) =>
  (a.position === null) - (b.position === null) ||
  (a.position ?? 0) - (b.position ?? 0) ||
  Date.parse(a.created_at) - Date.parse(b.created_at) ||
  (a.id < b.id ? -1 : 1);
