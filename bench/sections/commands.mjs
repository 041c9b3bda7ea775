// Sections 1–3: reading one task and sending commands, each against the floor Worker doing
// only the primitive underneath (one D1 read; one Durable Object call plus one D1 batch).
import { byRouteOrder, inLanes, log, timed } from "../lib/harness.mjs";

/** The service's and the floor's rates, CPU per request and their ratios, under `prefix`. */
function compare(ctx, prefix, label, svc, floor) {
  const { report } = ctx;
  report.diagnostic(`${prefix}.rps`, svc.requests.average, { unit: "req/s", label: `${label}: the service` });
  report.diagnostic(`${prefix}.floor_rps`, floor.requests.average, {
    unit: "req/s",
    label: `${label}: the floor`,
  });
  report.diagnostic(`${prefix}.cpu_ms`, svc.cpuPerRequest, {
    unit: "ms",
    label: `${label}: runtime CPU per request, the service`,
  });
  report.diagnostic(`${prefix}.floor_cpu_ms`, floor.cpuPerRequest, {
    unit: "ms",
    label: `${label}: runtime CPU per request, the floor`,
  });
  // Wall-clock rates on a shared machine move with the neighbours' load; CPU time does not.
  report.diagnostic(`${prefix}.cpu_ratio`, floor.cpuPerRequest / svc.cpuPerRequest, {
    unit: "ratio",
    label: `${label}: the figure from CPU time (floor CPU / service CPU per request)`,
  });
}

const failures = (r) => r.non2xx + r.errors + r.timeouts;

export const read = {
  n: 1,
  name: "read",
  ids: [
    "read.task.ratio",
    "read.task.rps",
    "read.task.floor_rps",
    "read.task.cpu_ratio",
    "read.task.ratio_of_plain_floor",
    "read.task.deep.rps",
    "read.task.deep.cpu_ms",
  ],
  async run(ctx) {
    const { api, svc, floor, turns, report, small, taskIds } = ctx;
    // The task measured is its worker's first open one (its ETA drives through no other stop);
    // the last of the worker's 500 is read beside it: its ETA drives through 200 stops (contract
    // §28's chain, services/eta MAX_ETA_STOPS), the most a GET ever computes.
    const mine = await api(`/tasks/?assignee=${encodeURIComponent(small.worker.url)}&page_size=500`, {
      token: small.token,
    });
    const chain = (mine.body?.results ?? []).sort(byRouteOrder);
    if (chain.length < 201) throw new Error(`GET /tasks/?assignee=: ${mine.status}, ${chain.length} tasks`);
    const deep = chain[chain.length - 1].id;
    const get = (id) => ({
      opts: { url: `${svc.url}/tasks/${id}/`, headers: { Authorization: `Bearer ${small.token}` } },
      pids: svc.pids(),
    });
    const [floorRead, svcRead, plainRead, deepRead] = await turns([
      { opts: { url: `${floor.url}/read?id=row-1` }, pids: floor.pids() },
      get(taskIds[0]),
      { opts: { url: `${floor.url}/read?id=row-1&plain=1` }, pids: floor.pids() },
      get(deep),
    ]);
    // A run with failed GETs has no such figure (unmeasured: the run fails).
    report.diagnostic("read.task.deep.rps", failures(deepRead) ? Number.NaN : deepRead.requests.average, {
      unit: "req/s",
      label: "GET /tasks/{id}/ of a task with 200 stops before it (its ETA's whole chain): the service",
    });
    report.diagnostic("read.task.deep.cpu_ms", deepRead.cpuPerRequest, {
      unit: "ms",
      label: "the same GET: runtime CPU per request",
    });
    const ratio = svcRead.requests.average / floorRead.requests.average;
    log(
      "GET task",
      svcRead.requests.average,
      "floor",
      floorRead.requests.average,
      "floor outside a session",
      plainRead.requests.average,
      "failed",
      failures(svcRead),
    );
    report.figure("read.task.ratio", ratio, {
      label: "GET /tasks/{id}/ req/s vs the floor (one D1 read, in a D1 session)",
      unit: "ratio",
      target: ">= 0.5",
      ok: failures(svcRead) === 0,
    });
    // The floor before contract §24 put every request in a D1 session (bench/floor/index.ts).
    report.diagnostic(
      "read.task.ratio_of_plain_floor",
      svcRead.requests.average / plainRead.requests.average,
      {
        label: "GET /tasks/{id}/ req/s vs one D1 read outside a session",
        unit: "ratio",
      },
    );
    compare(ctx, "read.task", "GET /tasks/{id}/", svcRead, floorRead);
  },
};

/** The single commands' run, shared by sections 2 and 3 (the batch figure's denominator). */
async function singles(ctx) {
  ctx.singles ??= (async () => {
    const { svc, floor, turns, small, taskIds } = ctx;
    const anyRow = (path) => [
      { setupRequest: (req) => ({ ...req, path: path(Math.floor(Math.random() * 100)) }) },
    ];
    let seq = 0;
    const [floorWrite, svcWrite, floorIndexed] = await turns([
      {
        opts: {
          url: `${floor.url}/write?id=row-1`,
          method: "POST",
          requests: anyRow((i) => `/write?id=row-${i}`),
        },
        pids: floor.pids(),
      },
      {
        opts: {
          url: `${svc.url}/task_commands/`,
          method: "POST",
          headers: { Authorization: `Bearer ${small.token}`, "Content-Type": "application/json" },
          requests: [
            {
              setupRequest: (req) => ({
                ...req,
                body: JSON.stringify({
                  task: `${svc.url}/tasks/${taskIds[seq % taskIds.length]}/`,
                  external_id: `single-${seq++}-${Math.random()}`,
                  time: new Date().toISOString(),
                  action: "update",
                  task_data: { position: seq },
                }),
              }),
            },
          ],
        },
        pids: svc.pids(),
      },
      // One command's writes in the service's schema (its indexes), by the floor: the share of
      // the gap that is the schema rather than the service's code.
      {
        opts: {
          url: `${floor.url}/write?id=row-1&shape=indexed`,
          method: "POST",
          requests: anyRow((i) => `/write?shape=indexed&id=row-${i}`),
        },
        pids: floor.pids(),
      },
    ]);
    log(
      "POST command",
      svcWrite.requests.average,
      "floor",
      floorWrite.requests.average,
      "failed",
      failures(svcWrite),
    );
    return { svcWrite, floorWrite, floorIndexed };
  })();
  return ctx.singles;
}

export const single = {
  n: 2,
  name: "command",
  ids: [
    "command.single.ratio",
    "command.single.rps",
    "command.single.floor_rps",
    "command.single.cpu_ratio",
    "command.single.ratio_of_indexed_floor",
  ],
  async run(ctx) {
    const { svcWrite, floorWrite, floorIndexed } = await singles(ctx);
    const ratio = svcWrite.requests.average / floorWrite.requests.average;
    ctx.report.figure("command.single.ratio", ratio, {
      label: "single POST /task_commands/ req/s vs the floor (DO call + D1 batch)",
      unit: "ratio",
      target: ">= 0.5",
      ok: failures(svcWrite) === 0,
    });
    compare(ctx, "command.single", "single POST /task_commands/", svcWrite, floorWrite);
    ctx.report.diagnostic("command.single.floor_indexed_rps", floorIndexed.requests.average, {
      unit: "req/s",
      label: "single POST /task_commands/: the floor writing one command's rows into the service's schema",
    });
    ctx.report.diagnostic(
      "command.single.ratio_of_indexed_floor",
      svcWrite.requests.average / floorIndexed.requests.average,
      { unit: "ratio", label: "single POST /task_commands/: the figure against that floor" },
    );
  },
};

/**
 * Batches of 500 commands over 100 tasks. A batch takes long enough that a time-boxed load
 * generator counts too few completions: a fixed amount of work (BENCH_BATCHES requests, 4 at a
 * time) is timed instead, after 4 unmeasured batches (the warm-up the autocannon figures get).
 * The figure's floor (the "ceiling" of issue 26) writes each task's rows (5 commands: the task
 * row, the command rows and their events) the way the service did until its group commit: one
 * call to the task's Durable Object, which makes one D1 batch, 100 tasks per request, 4 requests
 * at a time, with no code of ours. The figure is the service's rate against it: the floor's ms
 * per task over the service's. The service now writes a request's tasks together (each task's
 * object decides, the request makes one D1 transaction per ~100 tasks), so it can pass that
 * floor; `ratio_of_group_floor` measures it against a floor doing the same rows that way.
 */
export const batch = {
  n: 3,
  name: "batch",
  ids: [
    "command.batch500.ratio_of_ceiling",
    "command.batch500.cpu_ratio_of_ceiling",
    "command.batch500.vs_single",
    "command.batch500.ceiling_vs_single",
    "command.batch500.ratio_of_indexed_ceiling",
    "command.batch500.ratio_of_group_floor",
  ],
  async run(ctx) {
    const { svc, floor, report, small, taskIds, settings } = ctx;
    const { svcWrite } = await singles(ctx);
    const total = settings.batches;
    let seq = 0;
    let failed = 0;
    const body = () =>
      JSON.stringify(
        Array.from({ length: 500 }, (_, k) => ({
          task: `${svc.url}/tasks/${taskIds[k % 100]}/`,
          external_id: `batch-${seq}-${k}-${Math.random()}`,
          time: new Date().toISOString(),
          action: "update",
          task_data: { position: seq++ },
        })),
      );
    const batches = (count) =>
      inLanes(4, count, async () => {
        const res = await fetch(`${svc.url}/task_commands/`, {
          method: "POST",
          headers: { Authorization: `Bearer ${small.token}`, "Content-Type": "application/json" },
          body: body(),
        });
        if (res.status !== 201) failed++;
        await res.arrayBuffer();
      });
    const floorBatches = (shape) => (count) =>
      inLanes(4, count, async () => {
        await (await fetch(`${floor.url}/write-many?n=100&shape=${shape}`, { method: "POST" })).arrayBuffer();
      });
    // The same writes into tables with the service's columns and indexes (shape=indexed): how
    // much of the gap is the schema's index maintenance rather than the service's code.
    const sides = [
      { send: batches, pids: svc.pids() },
      { send: floorBatches("run"), pids: floor.pids() },
      { send: floorBatches("indexed"), pids: floor.pids() },
      { send: floorBatches("group"), pids: floor.pids() },
    ];
    // In turns, as the autocannon figures (see loadGenerator): slices of the fixed work.
    const slices = Math.max(1, Math.min(settings.slices, total));
    const [s, f, fi, fg] = sides.map(() => ({ ms: 0, cpu: 0 }));
    const acc = [s, f, fi, fg];
    for (const side of sides) if (settings.warmup > 0) await side.send(4);
    for (let r = 0; r < slices; r++) {
      const count = Math.floor(total / slices) + (r < total % slices ? 1 : 0);
      const order = r % 2 ? [3, 2, 1, 0] : [0, 1, 2, 3];
      for (const i of order) {
        const t = await timed(sides[i].pids, () => sides[i].send(count));
        acc[i].ms += t.ms;
        acc[i].cpu += t.cpu;
      }
    }
    const tasks = total * 100;
    const svcPerTask = s.ms / tasks;
    const floorPerTask = f.ms / tasks;
    const svcCpuPerTask = s.cpu / tasks;
    const floorCpuPerTask = f.cpu / tasks;
    const cps = (total * 500) / (s.ms / 1000);
    const singleCps = svcWrite.requests.average;
    const singleCpu = svcWrite.cpuPerRequest;
    log("batch cmds/s", cps.toFixed(0), "single cmds/s", singleCps, "failed", failed);
    log("batch ms per task", svcPerTask.toFixed(3), "floor", floorPerTask.toFixed(3));
    log("batch CPU ms per task", svcCpuPerTask.toFixed(3), "floor", floorCpuPerTask.toFixed(3));
    report.figure("command.batch500.ratio_of_ceiling", floorPerTask / svcPerTask, {
      label: "batches of 500 commands over 100 tasks: rate vs the floor doing the same writes",
      unit: "ratio",
      target: ">= 0.8",
      ok: failed === 0,
    });
    report.diagnostic("command.batch500.cpu_ratio_of_ceiling", floorCpuPerTask / svcCpuPerTask, {
      unit: "ratio",
      label: "batches: the figure from CPU time (floor CPU / service CPU per task)",
    });
    report.diagnostic("command.batch500.ms_per_task", svcPerTask, {
      unit: "ms",
      label: "batches: ms per task, the service",
    });
    report.diagnostic("command.batch500.floor_ms_per_task", floorPerTask, {
      unit: "ms",
      label: "batches: ms per task, the floor doing the same writes (DO call + D1 batch)",
    });
    report.diagnostic("command.batch500.cpu_ms_per_task", svcCpuPerTask, {
      unit: "ms",
      label: "batches: runtime CPU per task, the service",
    });
    report.diagnostic("command.batch500.floor_cpu_ms_per_task", floorCpuPerTask, {
      unit: "ms",
      label: "batches: runtime CPU per task, the floor",
    });
    report.diagnostic("command.batch500.floor_indexed_ms_per_task", fi.ms / tasks, {
      unit: "ms",
      label: "batches: ms per task, the floor doing the same writes into the service's schema (its indexes)",
    });
    report.diagnostic("command.batch500.ratio_of_indexed_ceiling", fi.ms / tasks / svcPerTask, {
      unit: "ratio",
      label: "batches: the figure against that floor (the service's schema: its code's share of the gap)",
    });
    report.diagnostic("command.batch500.cpu_ratio_of_indexed_ceiling", fi.cpu / tasks / svcCpuPerTask, {
      unit: "ratio",
      label: "batches: the same from CPU time",
    });
    report.diagnostic("command.batch500.floor_group_ms_per_task", fg.ms / tasks, {
      unit: "ms",
      label:
        "batches: ms per task, the floor writing the same rows the service's way (object calls, then one D1 transaction)",
    });
    report.diagnostic("command.batch500.ratio_of_group_floor", fg.ms / tasks / svcPerTask, {
      unit: "ratio",
      label: "batches: the figure against that floor (the service's code on top of group commit)",
    });
    report.diagnostic("command.batch500.cpu_ratio_of_group_floor", fg.cpu / tasks / svcCpuPerTask, {
      unit: "ratio",
      label: "batches: the same from CPU time",
    });
    report.diagnostic("command.batch500.commands_per_second", cps, {
      unit: "cmd/s",
      label: "batches: commands/s",
    });
    // The older figure (target 10 until issue 26): batched commands/s over single ones, and its
    // ceiling on this runtime (the floor's per-task writes in place of the service's).
    report.diagnostic("command.batch500.vs_single", cps / singleCps, {
      unit: "ratio",
      label: "batches: commands/s vs single commands/s",
    });
    report.diagnostic("command.batch500.ceiling_vs_single", 5000 / floorPerTask / singleCps, {
      unit: "ratio",
      label: "batches: the floor's per-task writes vs the service's singles (the ceiling of vs_single)",
    });
    report.diagnostic("command.batch500.cpu_vs_single", singleCpu / (svcCpuPerTask / 5), {
      unit: "ratio",
      label: "batches: vs_single from CPU time (CPU per single / per batched command)",
    });
  },
};
