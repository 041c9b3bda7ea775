// Section 19: auto-assign (contract §29). An account of its own whose local time is about midday
// (a fixed UTC offset chosen from the hour, a shift of the whole day, so "today" never ends in
// the middle of the run), 50 workers on duty, each with a route today of 40 stops around
// Helsinki (windows open all day). Then one new task at a time is placed by
// `POST /tasks/auto_assign/`: the runtime's CPU of each request (its workerd processes, /proc:
// the insertion against 50 routes of 40 stops, with the day's reads and the system's `assign`
// command) and its wall time. /proc counts CPU in ticks of 10 ms: the p99 of the samples is
// given, and the mean over all of them beside it.

import { addWorkers, log, makeAccount, percentile, putOnDuty, quiet } from "../lib/harness.mjs";

const WORKERS = 50;
const STOPS = 40;
/**
 * An assign's after-work includes the stream object's lateness check of the worker's tasks, run
 * by its alarm two seconds after the write (LATE_CHECK_MS, durable-objects/account-stream): a
 * sample ends once that has run, so its CPU is counted in the sample of the writes that set it
 * off, not in whichever sample the alarm happens to fall into.
 */
const AFTER_WORK_MS = 2_500;

/**
 * The section's day: an account whose local time is about midday, WORKERS workers on duty with
 * a route today of STOPS stops each; `newTask(w)` makes an unassigned task near worker w's route.
 * Also used by bench/profile.mjs.
 */
export async function autoAssignDay(api) {
  const acc = await makeAccount(api, "autoassign");
  const admin = acc.token;
  const offset = 12 - new Date().getUTCHours();
  const zone = offset === 0 ? "Etc/UTC" : `Etc/GMT${offset > 0 ? "-" : "+"}${Math.abs(offset)}`;
  const patch = await api(`/accounts/${acc.account.id}/`, {
    method: "PATCH",
    token: admin,
    body: { timezone: zone, optimize_earliest_start: "00:00:00", optimize_latest_end: "23:59:00" },
  });
  if (patch.status !== 200) throw new Error(`PATCH account: ${patch.status} ${patch.text.slice(0, 300)}`);
  const today = new Intl.DateTimeFormat("en-CA", { timeZone: zone }).format(Date.now());
  const now = Date.now();
  const window = {
    complete_after: new Date(now).toISOString(),
    complete_before: new Date(now + 10 * 3600_000).toISOString(),
  };
  const users = await addWorkers(api, acc, { prefix: "aa", count: WORKERS });
  await putOnDuty(api, admin);
  // Each worker's route: a loop of 40 stops in its own part of the city, 2 minutes each.
  const at = (w, k) => [
    24.75 + (w % 10) * 0.05 + 0.01 * Math.cos(k / 6),
    60.15 + Math.floor(w / 10) * 0.03 + 0.01 * Math.sin(k / 6),
  ];
  for (const [w, u] of users.entries()) {
    const route = await api("/routes/", {
      token: admin,
      body: { name: `Route ${w}`, assignee: u.url, date: today },
    });
    if (route.status !== 201) throw new Error(`POST /routes/: ${route.status} ${route.text.slice(0, 300)}`);
    const stops = Array.from({ length: STOPS }, (_, k) => ({
      category: "drop_off",
      address: { raw_address: `Stop ${w}-${k}`, location: { type: "Point", coordinates: at(w, k) } },
      duration: "00:02:00",
      ...window,
      assignee: u.url,
      route: route.body.url,
      position: k + 1,
    }));
    const order = await api("/orders/", {
      token: admin,
      body: { account: acc.account.url, tasks_data: stops },
    });
    if (order.status !== 201) throw new Error(`POST /orders/: ${order.status} ${order.text.slice(0, 300)}`);
  }
  let n = 0;
  const newTask = async (w) => {
    const t = await api("/tasks/", {
      token: admin,
      body: {
        account: acc.account.url,
        category: "drop_off",
        address: { raw_address: `New ${n}`, location: { type: "Point", coordinates: at(w, n++ * 7 + 3) } },
        duration: "00:02:00",
        ...window,
      },
    });
    if (t.status !== 201) throw new Error(`POST /tasks/: ${t.status} ${t.text.slice(0, 300)}`);
    return t.body;
  };
  return { acc, admin, users, newTask };
}

export const autoAssignSection = {
  n: 19,
  name: "auto-assign",
  ids: [
    "autoassign.insert_ms.p99",
    "autoassign.insert_ms.mean",
    "autoassign.wall_ms.p99",
    "autoassign.placed",
  ],
  async run({ api, svc, report, settings }) {
    const { admin, users, newTask } = await autoAssignDay(api);
    // Samples of PER insertions each: /proc counts in ticks of 10 ms, so one sample's CPU is read
    // to 10/PER ms. The first sample warms the isolate up and is not counted.
    const PER = 5;
    const samples = settings.quick ? 8 : 30;
    const pids = svc.pids();
    const cpu = [];
    const wall = [];
    const base = [];
    let placed = 0;
    for (let i = 0; i <= samples; i++) {
      const tasks = [];
      for (let k = 0; k < PER; k++) tasks.push(await newTask((i * PER + k) % WORKERS));
      // From a quiet runtime (the tasks' creation has done its after-work) until quiet again: the
      // CPU counted is the insertions' own, with what they set off after answering (events, the
      // live stream, the lateness check: AFTER_WORK_MS), and nothing of the creation before them.
      const c0 = await quiet(pids);
      const t0 = performance.now();
      for (const t of tasks) {
        const r = await api("/tasks/auto_assign/", { token: admin, body: { tasks: [t.url] } });
        if (r.status !== 200)
          throw new Error(`POST /tasks/auto_assign/: ${r.status} ${r.text.slice(0, 300)}`);
        if (i > 0 && r.body[0].assignee) placed++;
      }
      const ms = (performance.now() - t0) / PER;
      const c = ((await quiet(pids, { notBefore: performance.now() + AFTER_WORK_MS })) - c0) / PER;
      // The same write without the insertion: an `assign` command of a new task, for comparison.
      const others = [];
      for (let k = 0; k < PER; k++) others.push(await newTask(k));
      const b0 = await quiet(pids);
      for (const [k, t] of others.entries()) {
        const r = await api("/task_commands/", {
          token: admin,
          body: {
            task: t.url,
            external_id: `bench-${i}-${k}-${Date.now()}`,
            time: new Date().toISOString(),
            action: "assign",
            assignee: users[k % WORKERS].url,
          },
        });
        if (r.status !== 201) throw new Error(`POST /task_commands/: ${r.status} ${r.text.slice(0, 300)}`);
      }
      const b = ((await quiet(pids, { notBefore: performance.now() + AFTER_WORK_MS })) - b0) / PER;
      if (i === 0) continue;
      cpu.push(c);
      wall.push(ms);
      base.push(b);
    }
    if (![...cpu, ...base].every(Number.isFinite))
      throw new Error("auto-assign: the runtime's CPU could not be read");
    const avg = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const mean = avg(cpu);
    log(
      `auto-assign: ${samples * PER} insertions into ${WORKERS} routes of ${STOPS}, CPU p99 ${percentile(cpu, 99)} ms, mean ${mean.toFixed(1)} ms; samples ${[...cpu].sort((a, b) => a - b).join(" ")}`,
    );
    report.figure("autoassign.insert_ms.p99", percentile(cpu, 99), {
      label: `CPU of one insertion into ${WORKERS} routes of ${STOPS} stops (POST /tasks/auto_assign/, the whole request; samples of ${PER}), p99`,
      unit: "ms",
      target: "<= 50",
    });
    report.diagnostic("autoassign.insert_ms.mean", Number(mean.toFixed(2)), {
      label: "the same CPU, mean over the samples",
      unit: "ms",
    });
    report.diagnostic("autoassign.wall_ms.p99", Number(percentile(wall, 99).toFixed(1)), {
      label: "wall time of the same requests, p99",
      unit: "ms",
    });
    report.diagnostic("autoassign.placed", placed, {
      label: `of ${samples * PER} new tasks placed on a route`,
    });
    report.diagnostic("autoassign.assign_command_ms.mean", Number(avg(base).toFixed(2)), {
      label:
        "CPU of an assign command of a new task (POST /task_commands/), the same write without the insertion, mean",
      unit: "ms",
    });
  },
};
