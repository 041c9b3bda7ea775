// Section 17: workers' positions (contract §28), the first data that grows with time rather
// than work. On an account of its own with `positionWorkers` workers on duty (100; quick 20):
// - bytes: each worker's last twelve hours sent as a phone back online sends them (a position
//   every 15 s, in batches of two hours, in time order); SQLite's dbstat on the service's local D1 files
//   before and after, over the trail's table and its indexes (free space in their pages
//   included), per position stored. The latest positions' table (one row per worker, not per
//   position) is a diagnostic of its own;
// - statements: one position from each worker within a second (each worker with two stops
//   today), then the D1 statements the positions cost until all is written (the account's
//   stream object counts them: trails, the latest positions' copy, the lateness check and its
//   ETAs, `task.late` events; GET /events/stream_stats/ with
//   EXPOSE_D1_ROUND_TRIPS). Each POST's own check of its token (one round trip, as for any
//   request) is a diagnostic beside it;
// - the stream: every worker sending every 5 s for a while, and a dispatch screen's stream
//   (`types=worker.position`): the delay from each POST's 202 to its `worker.position`.

import { join } from "node:path";
import { addWorkers, BENCH_PASSWORD, log, makeAccount, percentile, putOnDuty } from "../lib/harness.mjs";
import { d1Files, dbstat } from "../storage.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const TRAIL = ["position_slices", "sqlite_autoindex_position_slices_1", "position_slices_sweep_idx"];
const LATEST = ["worker_positions", "sqlite_autoindex_worker_positions_1"];
const D1_LIMIT_BYTES = 10e9;

/** A worker's position `i` steps of 15 s after `t0`, driving a line through Helsinki. */
const position = (w, i, t0) => ({
  location: { type: "Point", coordinates: [24.9 + w * 0.001 + i * 0.0011, 60.15 + i * 0.0007] },
  time: new Date(t0 + i * 15_000).toISOString(),
  accuracy_m: 4 + (i % 5),
  speed_mps: 8 + (i % 7) * 0.6,
  heading_deg: (45 + i * 3) % 360,
});

export const positionsSection = {
  n: 17,
  name: "positions",
  ids: [
    "positions.bytes_per_position",
    "positions.d1_statements_per_100",
    "positions.stored",
    "positions.per_10gb",
    "positions.latest.bytes_per_worker",
    "positions.request.round_trips",
    "positions.stream_delay_ms.p50",
    "positions.stream_delay_ms.p99",
    "console.position.delay_ms.p99",
    "console.position.delay_ms.p50",
    "console.position.workers",
    "console.position.delay_with_hold_ms.p99",
  ],
  async run({ api, svc, report, state, settings }) {
    // The statements figure is for 100 workers; the bytes use `positionWorkers` of them (100; quick 20).
    const workers = 100;
    const trailWorkers = Math.min(workers, settings.positionWorkers);
    const acc = await makeAccount(api, "positions");
    const admin = acc.token;
    const users = await addWorkers(api, acc, { prefix: "pos", count: workers, hijack: true });
    await putOnDuty(api, admin, { users });
    // A route for each worker (two stops today, windows open all day): the lateness check after
    // positions then has ETAs to compute, as it has on a working day.
    const day = new Date().toISOString().slice(0, 10);
    const stops = users.flatMap((u, w) =>
      [0, 1].map((k) => ({
        category: "drop_off",
        address: {
          raw_address: `Stop ${w}-${k}, Helsinki`,
          location: { type: "Point", coordinates: [24.9 + w * 0.002, 60.16 + k * 0.01] },
        },
        complete_after: `${day}T00:00:00Z`,
        complete_before: `${day}T23:59:00Z`,
        assignee: u.url,
        position: k + 1,
      })),
    );
    const order = await api("/orders/", {
      token: admin,
      body: { account: acc.account.url, tasks_data: stops },
    });
    if (order.status !== 201) throw new Error(`POST /orders/: ${order.status} ${order.text.slice(0, 300)}`);
    const stats = async () => {
      const s = await api("/events/stream_stats/", { token: admin });
      if (s.status !== 200 || !s.body.positions)
        throw new Error(`stream_stats: ${s.status} ${s.text.slice(0, 300)}`);
      return s.body.positions;
    };
    /** Until nothing waits and the count of statements has not moved for 3 s (the lateness check's delay and more). */
    const settled = async () => {
      let last = -1;
      let still = 0;
      for (let i = 0; i < 120 && still < 6; i++) {
        const s = await stats();
        still = s.buffered === 0 && s.d1_statements === last ? still + 1 : 0;
        last = s.d1_statements;
        await sleep(500);
      }
      return last;
    };

    // Bytes: twelve hours of trail per worker (two whole slices: a partial slice and an index's
    // first page would weigh on a short trail more than on a day's), in batches of two hours,
    // in time order.
    const persist = join(state, "svc");
    const pick = (o, names) => names.reduce((a, n) => a + (o[n] ?? 0), 0);
    const before = dbstat(d1Files(persist));
    const steps = 2880;
    const t0 = Date.now() - steps * 15_000 - 60_000;
    let stored = 0;
    let dropped = 0;
    for (let b = 0; b < steps; b += 480) {
      await Promise.all(
        users.slice(0, trailWorkers).map(async (u, w) => {
          const body = Array.from({ length: 480 }, (_, k) => position(w, b + k, t0));
          const r = await api("/positions/", { token: u.token, body });
          if (r.status !== 202) throw new Error(`POST /positions/: ${r.status} ${r.text.slice(0, 300)}`);
          stored += r.body.stored;
          dropped += r.body.dropped;
        }),
      );
    }
    await settled();
    const after = dbstat(d1Files(persist));
    const trailBytes = pick(after, TRAIL) - pick(before, TRAIL);
    const latestBytes = pick(after, LATEST) - pick(before, LATEST);
    if (!stored || dropped) throw new Error(`positions: ${stored} stored, ${dropped} dropped`);
    const perPosition = trailBytes / stored;
    log("positions", stored, "stored,", trailBytes, "trail bytes,", perPosition.toFixed(2), "B each");
    report.figure("positions.bytes_per_position", perPosition, {
      label: "D1 bytes per stored trail position (table and indexes, dbstat)",
      unit: "B",
      target: "<= 16",
    });
    report.diagnostic("positions.stored", stored, { label: "positions stored for the bytes figure" });
    report.diagnostic("positions.per_10gb", Math.floor(D1_LIMIT_BYTES / perPosition), {
      label: "trail positions a 10 GB D1 database holds",
    });
    report.diagnostic("positions.latest.bytes_per_worker", latestBytes / trailWorkers, {
      label: "D1 bytes of the latest-position copy per worker",
      unit: "B",
    });

    // Statements: one position from each worker within a second.
    const s0 = await settled();
    const now = Date.now();
    const answers = await Promise.all(
      users.map((u, w) =>
        api("/positions/", { token: u.token, body: position(w, steps + 4, now - (steps + 4) * 15_000) }),
      ),
    );
    for (const r of answers)
      if (r.status !== 202) throw new Error(`POST /positions/: ${r.status} ${r.text.slice(0, 200)}`);
    const s1 = await settled();
    log("positions: statements for", workers, "workers' positions:", s1 - s0);
    report.figure("positions.d1_statements_per_100", s1 - s0, {
      label: "D1 statements for 100 positions of 100 workers within a second (stream object's count)",
      target: "<= 10",
    });
    report.diagnostic("positions.request.round_trips", Number(answers[0].headers.get("X-D1-Round-Trips")), {
      label: "D1 round trips of one POST /positions/ (its token's check)",
    });

    // The stream: every worker every 5 s, a dispatch screen listening (after the 5 s that the
    // last message of each worker holds the next back).
    await sleep(5500);
    const ticket = await api("/events/stream_tickets/", { method: "POST", token: admin });
    const url = new URL(ticket.body.url);
    url.searchParams.set("types", "worker.position");
    const ws = new WebSocket(url);
    const received = new Map();
    ws.onmessage = (m) => {
      if (m.data === "pong") return;
      const e = JSON.parse(m.data);
      received.set(`${e.data.user}|${e.data.time}`, performance.now());
    };
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onerror = reject;
    });
    const rounds = settings.quick ? 3 : 6;
    const sent = [];
    for (let k = 0; k < rounds; k++) {
      const round = Date.now();
      await Promise.all(
        users.map(async (u, w) => {
          // Spread over the 5 s, as phones are.
          await sleep((w / users.length) * 5000);
          const body = position(w, steps + 10 + k, 0);
          body.time = new Date().toISOString();
          const r = await api("/positions/", { token: u.token, body });
          if (r.status === 202 && r.body.stored)
            sent.push({ key: `${u.url}|${body.time}`, at: performance.now() });
        }),
      );
      await sleep(Math.max(0, 5500 - (Date.now() - round)));
    }
    await sleep(2000);
    ws.close();
    const delays = sent.map((s) => (received.has(s.key) ? Math.max(0, received.get(s.key) - s.at) : 2000));
    report.diagnostic("positions.stream_delay_ms.p50", percentile(delays, 50), {
      label: "POST /positions/ 202 → worker.position on a stream, p50",
      unit: "ms",
    });
    report.diagnostic("positions.stream_delay_ms.p99", percentile(delays, 99), {
      label: "POST /positions/ 202 → worker.position on a stream, p99",
      unit: "ms",
    });

    await consoleMarkers({ api, admin, acc, users, report, settings, svcUrl: svc.url });
  },
};

/**
 * console.position.delay_ms: the console open on the account's day in Chromium, `consoleWorkers`
 * workers on duty (500; quick 100) each sending a position every 5 s or so, and a
 * MutationObserver in the page noting when each worker's marker moves: the delay from each
 * POST's 202 (or, for a position the stream must hold because the worker's previous message went
 * less than 5 s before, contract §28, from the end of that hold) to its marker's move (a move
 * seen before then counts as 0 ms, one never seen as 5,000 ms).
 */
async function consoleMarkers({ api, admin, acc, users, report, settings, svcUrl }) {
  const { chromium } = await import("playwright-core");
  const want = settings.consoleWorkers;
  if (want > users.length)
    users.push(
      ...(await addWorkers(api, acc, {
        prefix: "pos",
        from: users.length,
        count: want - users.length,
        hijack: true,
        parallel: 20,
      })),
    );
  await putOnDuty(api, admin);
  const round = async (k, onAnswer) =>
    Promise.all(
      users.map(async (u, w) => {
        await sleep((w / users.length) * 5000);
        const body = position(w, 600 + k, 0);
        body.time = new Date().toISOString();
        const sent = Date.now();
        const r = await api("/positions/", { token: u.token, body });
        if (r.status === 202 && r.body.stored) onAnswer?.({ url: u.url, sent, answered: Date.now() });
      }),
    );
  // Every worker has a position (a marker) before the page opens.
  await round(0);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
  });
  try {
    const page = await (
      await browser.newContext({ viewport: { width: 1600, height: 1000 }, locale: "en-GB" })
    ).newPage();
    await page.goto(`${svcUrl}/console/?lang=en`);
    await page.getByRole("textbox", { name: "Email" }).fill(acc.user.email);
    await page.getByRole("textbox", { name: "Password" }).fill(BENCH_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("status").filter({ hasText: "Live" }).waitFor({ timeout: 30_000 });
    await page.waitForFunction((n) => document.querySelectorAll(".worker-pin").length >= n, users.length, {
      timeout: 30_000,
    });
    await page.evaluate(() => {
      const moves = [];
      window.__pinMoves = moves;
      new MutationObserver((records) => {
        const at = Date.now();
        for (const r of records) moves.push([r.target.dataset.worker, at]);
      }).observe(document.querySelector(".map"), {
        subtree: true,
        attributes: true,
        attributeFilter: ["style"],
      });
    });
    await sleep(5500);
    const answers = [];
    const rounds = settings.quick ? 3 : 6;
    for (let k = 1; k <= rounds; k++) {
      const started = Date.now();
      await round(k, (a) => answers.push(a));
      await sleep(Math.max(0, 5500 - (Date.now() - started)));
    }
    await sleep(3000);
    const moves = await page.evaluate(() => window.__pinMoves);
    const byWorker = new Map();
    for (const [url, at] of moves) byWorker.get(url)?.push(at) ?? byWorker.set(url, [at]);
    // The stream sends a worker's position at most once per 5 s (contract §28): a position
    // answered less than 5 s after that worker's previous message (a slow POST followed by a
    // quick one) is held by the service until its 5 s are up, as the contract says. That hold is
    // not the page's delay: each delay runs from the later of the answer and the end of the hold.
    const delays = answers.map((a) => {
      const moves = byWorker.get(a.url) ?? [];
      const k = moves.findIndex((t) => t >= a.sent);
      if (k < 0) return 5000;
      const held = k > 0 ? moves[k - 1] + 5000 : 0;
      return Math.max(0, moves[k] - Math.max(a.answered, held));
    });
    const raw = answers.map((a) => {
      const at = (byWorker.get(a.url) ?? []).find((t) => t >= a.sent);
      return at === undefined ? 5000 : Math.max(0, at - a.answered);
    });
    log(
      `console markers: ${answers.length} positions of ${users.length} workers, p99 ${percentile(delays, 99)} ms`,
    );
    report.figure("console.position.delay_ms.p99", percentile(delays, 99), {
      label: `console: a position's 202 to its marker's move on the map, p99 (${users.length} workers every ~5 s)`,
      unit: "ms",
      target: "<= 1000",
    });
    report.diagnostic("console.position.delay_ms.p50", percentile(delays, 50), {
      label: "console: a position's 202 to its marker's move, p50",
      unit: "ms",
    });
    report.diagnostic("console.position.workers", users.length, { label: "on-duty workers sending" });
    report.diagnostic("console.position.delay_with_hold_ms.p99", percentile(raw, 99), {
      label: "the same from the 202 itself, the stream's 5 s hold of a too-early position included, p99",
      unit: "ms",
    });
  } finally {
    await browser.close();
  }
}
