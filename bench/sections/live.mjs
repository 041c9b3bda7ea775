// Section 12: the live stream (contract §25). An account of its own with `liveClients` stream
// clients (1,000; BENCH_QUICK 200) connected over WebSockets, as dispatch screens would be:
// - the delay from a command's 2xx answer to each client receiving the command's event (every
//   client, every command: p50 and p99 over all of them; an event that reached a client before
//   the answer did counts as 0 ms, one that never came as the wait's end);
// - the clients left idle: the runtime's memory they hold, and the stream object's starts while
//   nothing happens (GET /events/stream_stats/: `wakes` moves only when the object starts, so
//   a hibernated object that stays asleep shows 0), then one event that must still reach all;
// - what publishing costs a write: single commands' p50 on this account (1,000 listening) over
//   the same on an account with no stream (sequential requests, same run).
import { Worker } from "node:worker_threads";
import { log, makeAccount, percentile, rssOf } from "../lib/harness.mjs";

const COMMANDS = 20;
const WAIT_MS = 5_000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export const live = {
  n: 12,
  name: "live",
  ids: [
    "live.delay_ms.p50",
    "live.delay_ms.p99",
    "live.idle_connections",
    "live.idle.wakes",
    "live.idle.hibernated",
    "live.idle.rss_mib",
    "live.connect.rss_mib",
    "live.delay_from_send_ms.p50",
    "live.delay_from_send_ms.p99",
    "live.idle.delivered_after",
    "live.clients",
    "live.command.p50_ratio",
  ],
  async run(ctx) {
    const { api, svc, settings } = ctx;
    const clients = settings.liveClients;
    const acc = await makeAccount(api, "live");
    const quiet = await makeAccount(api, "quiet");
    const taskOf = async (a) => {
      const r = await api("/tasks/", {
        token: a.token,
        body: {
          account: a.account.url,
          category: "drop_off",
          address: { raw_address: "Helsinki, Finland" },
          description: "live",
        },
      });
      if (r.status !== 201) throw new Error(`POST /tasks/: ${r.status} ${r.text.slice(0, 300)}`);
      return r.body;
    };
    const task = await taskOf(acc);
    const quietTask = await taskOf(quiet);
    const stats = async () => {
      const r = await api("/events/stream_stats/", { token: acc.token });
      if (r.status !== 200) throw new Error(`GET /events/stream_stats/: ${r.status} ${r.text.slice(0, 300)}`);
      return r.body;
    };

    // Tickets first (each single use), then the sockets.
    const urls = [];
    for (let i = 0; i < clients; i += 50) {
      const got = await Promise.all(
        Array.from({ length: Math.min(50, clients - i) }, () =>
          api("/events/stream_tickets/", { token: acc.token, method: "POST" }),
        ),
      );
      for (const t of got) {
        if (t.status !== 201)
          throw new Error(`POST /events/stream_tickets/: ${t.status} ${t.text.slice(0, 300)}`);
        urls.push(`${t.body.url}&types=task_command.accepted`);
      }
    }
    const rssBefore = rssOf(svc.pids());
    const thread = new Worker(new URL("./live-clients.mjs", import.meta.url), {
      workerData: { urls, waitMs: WAIT_MS },
    });
    const reply = (type) =>
      new Promise((resolve, reject) => {
        const on = (m) => {
          if (m.type === "error") reject(new Error(m.message));
          else if (m.type === type) {
            thread.off("message", on);
            resolve(m);
          }
        };
        thread.on("message", on);
      });
    try {
      thread.postMessage({ type: "connect" });
      const { count } = await reply("connected");
      log("live", count, "clients connected");
      await this.measure({ ...ctx, acc, quiet, task, quietTask, stats, thread, reply, rssBefore });
    } finally {
      thread.postMessage({ type: "close" });
      await Promise.race([reply("closed"), sleep(5000)]);
      await thread.terminate();
    }
  },

  async measure({
    api,
    acc,
    quiet,
    task,
    quietTask,
    stats,
    thread,
    reply,
    svc,
    report,
    settings,
    rssBefore,
  }) {
    const clients = settings.liveClients;
    const rssConnected = rssOf(svc.pids());
    const command = async (a, t, id) => {
      const r = await api("/task_commands/", {
        token: a.token,
        body: {
          task: t.url,
          external_id: id,
          time: new Date().toISOString(),
          action: "update",
          task_data: {},
        },
      });
      if (r.status !== 201) throw new Error(`POST /task_commands/: ${r.status} ${r.text.slice(0, 300)}`);
    };
    const now = () => performance.timeOrigin + performance.now();
    /** One command; each client's delay after its answer and after it was sent (ms). */
    const publish = async (id) => {
      const sent = now();
      await command(acc, task, id);
      const answered = now();
      const done = reply("collected");
      thread.postMessage({ type: "collect", id, sent, answered });
      const r = await done;
      return { ...r, ms: answered - sent };
    };

    const delays = [];
    const fromSend = [];
    const liveMs = [];
    for (let k = 0; k < COMMANDS; k++) {
      const r = await publish(`live-${k}-${Math.random()}`);
      delays.push(...r.afterAnswer);
      fromSend.push(...r.afterSend);
      liveMs.push(r.ms);
      await sleep(50);
    }
    const quietMs = [];
    for (let k = 0; k < COMMANDS; k++) {
      const t0 = performance.now();
      await command(quiet, quietTask, `quiet-${k}-${Math.random()}`);
      quietMs.push(performance.now() - t0);
      await sleep(50);
    }
    log("live delays p50/p99", percentile(delays, 50), percentile(delays, 99));

    // Idle: nothing sent either way for `idleSeconds`.
    const idleStart = Date.now();
    const s1 = await stats();
    await sleep(settings.liveIdleSeconds * 1000);
    const rssIdle = rssOf(svc.pids());
    const s2 = await stats();
    // Reading the figures wakes a hibernated object: that start is ours, not the idle time's.
    const hibernated = Date.parse(s2.awake_since) > idleStart ? 1 : 0;
    const wakes = s2.wakes - s1.wakes - hibernated;
    const after = await publish(`after-idle-${Math.random()}`);

    report.figure("live.delay_ms.p50", percentile(delays, 50), {
      label: `live stream: a command's 2xx to its event at each of ${clients} clients, p50`,
      unit: "ms",
      target: "reference",
    });
    report.figure("live.delay_ms.p99", percentile(delays, 99), {
      label: `the same, p99 (${COMMANDS} commands × ${clients} clients)`,
      unit: "ms",
      target: "<= 1000",
    });
    report.figure("live.idle_connections", s2.connections, {
      label: `idle clients held by the account's stream object after ${settings.liveIdleSeconds} s quiet`,
      unit: "connections",
      target: `>= ${clients}`,
    });
    report.figure("live.idle.wakes", wakes, {
      label: "starts of the stream object while its clients were idle",
      unit: "wakes",
      target: "= 0",
    });
    report.diagnostic("live.idle.hibernated", hibernated, {
      label: "1 when the object had hibernated during the idle time (woken by the stats read after it)",
    });
    report.diagnostic("live.connect.rss_mib", (rssConnected - rssBefore) / 1024, {
      label: `runtime RSS growth while ${clients} clients connected (upgrades through the Worker included)`,
      unit: "MiB",
    });
    report.diagnostic("live.idle.rss_mib", (rssIdle - rssConnected) / 1024, {
      label: "runtime RSS change from connected to the end of the idle time (commands in between)",
      unit: "MiB",
    });
    report.diagnostic("live.delay_from_send_ms.p50", percentile(fromSend, 50), {
      label: "a command sent to its event at each client (the command's own time included), p50",
      unit: "ms",
    });
    report.diagnostic("live.delay_from_send_ms.p99", percentile(fromSend, 99), {
      label: "the same, p99",
      unit: "ms",
    });
    report.diagnostic("live.idle.delivered_after", after.reached, {
      label: "clients that got the first event after the idle time",
      unit: "clients",
    });
    report.diagnostic("live.clients", clients, { label: "stream clients connected", unit: "clients" });
    report.diagnostic("live.command.p50_ratio", percentile(liveMs, 50) / percentile(quietMs, 50), {
      label: `single command p50, account with ${clients} listening / account with none`,
    });
  },
};
