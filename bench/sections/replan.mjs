// Section 18: re-planning from now (contract §29, issue 54). A 1,000-stop day of 50 workers in
// Tallinn, half of it done: on each route the first 10 of its 20 stops completed, the 11th
// active, the worker's position fresh at its active stop; the account's clock set near noon
// (an Etc/GMT zone) so "today" has hours on both sides of now. The day's 50 routes are then
// re-optimized from now to a proposal (`from_now`, `apply: false`): the figure is the seconds
// from the POST to the completed proposal, with the service's budget
// (ROUTE_OPTIMIZATION_ITERATIONS = settings.optimizationIterations). Beside it, as a reference,
// the same routes optimized from scratch (no `from_now`: the 500 unfinished stops from the
// workers' depots at the shift's start) at the same budget; both distances are printed.
import { addWorkers, log, makeAccount, putOnDuty } from "../lib/harness.mjs";

const WORKERS = 50;
const PER_ROUTE = 20;
const DONE = 10;
const DEPOT = [24.75, 59.44];

/** Polls an optimization until it completes or fails (at most 10 minutes). */
async function finished(api, token, id) {
  const deadline = Date.now() + 600_000;
  for (;;) {
    const r = await api(`/route_optimizations/${id}/`, { token });
    if (["completed", "failed"].includes(r.body?.state) || Date.now() > deadline) return r.body;
    await new Promise((res) => setTimeout(res, 250));
  }
}

/** Commands as one batch of at most 500, each checked. */
async function commands(api, token, items) {
  for (let i = 0; i < items.length; i += 500) {
    const r = await api("/task_commands/", { token, body: items.slice(i, i + 500) });
    if (r.status !== 201 && r.status !== 200)
      throw new Error(`POST /task_commands/: ${r.status} ${r.text.slice(0, 300)}`);
    const refused = r.body.find((c) => c.state === "rejected");
    if (refused) throw new Error(`command refused: ${refused.error_message}`);
  }
}

export const replan = {
  n: 18,
  name: "replan",
  ids: [
    "replan.from_now.seconds.1000",
    "replan.from_now.km.1000",
    "replan.scratch.km.1000",
    "replan.scratch.seconds.1000",
  ],
  async run({ api, report, settings }) {
    const acc = await makeAccount(api, "replan");
    const admin = acc.token;
    const offset = 12 - new Date().getUTCHours();
    const timezone = offset === 0 ? "UTC" : offset > 0 ? `Etc/GMT-${offset}` : `Etc/GMT+${-offset}`;
    const patched = await api(`${new URL(acc.account.url).pathname}`, {
      method: "PATCH",
      token: admin,
      // Workers finish stops in parallel in the seeding: no transit/active limit.
      body: {
        timezone,
        optimize_earliest_start: "06:00:00",
        optimize_latest_end: "23:59:59",
        transit_active_limit: null,
      },
    });
    if (patched.status !== 200)
      throw new Error(`PATCH account: ${patched.status} ${patched.text.slice(0, 300)}`);
    const today = new Intl.DateTimeFormat("en-CA", {
      timeZone: timezone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
    }).format(Date.now());
    const depot = { raw_address: "Depot", location: { type: "Point", coordinates: DEPOT } };
    const workers = await addWorkers(api, acc, { prefix: "replan", count: WORKERS, hijack: true });
    await putOnDuty(api, admin, { users: workers, extra: { start_address: depot, end_address: depot } });
    const routes = [];
    for (const [w, worker] of workers.entries()) {
      const r = await api("/routes/", {
        token: admin,
        body: { name: `Route ${w + 1}`, assignee: worker.url, date: today },
      });
      if (r.status !== 201) throw new Error(`POST /routes/: ${r.status} ${r.text.slice(0, 300)}`);
      routes.push(r.body.url);
    }
    // Points within ~15 km of Tallinn's centre, deterministic; each route's 20 stops in the
    // order they were made (a day planned, not optimized).
    let seed = 11;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const point = () => [24.75 + (rnd() - 0.5) * 0.5, 59.44 + (rnd() - 0.5) * 0.25];
    const byRoute = routes.map(() => []);
    for (let o = 0; o < 2; o++) {
      const data = Array.from({ length: 500 }, (_, k) => {
        const i = o * 500 + k;
        const w = i % WORKERS;
        return {
          category: "drop_off",
          route: routes[w],
          assignee: workers[w].url,
          position: Math.floor(i / WORKERS) + 1,
          duration: "00:05:00",
          address: { raw_address: `stop ${i}`, location: { type: "Point", coordinates: point() } },
        };
      });
      const r = await api("/orders/", { token: admin, body: { account: acc.account.url, tasks_data: data } });
      if (r.status !== 201) throw new Error(`POST /orders/: ${r.status} ${r.text.slice(0, 300)}`);
      // The order's task URLs come in `tasks_data` order.
      r.body.tasks.forEach((url, k) => {
        const d = data[k];
        byRoute[routes.indexOf(d.route)].push({ url, id: url.split("/").filter(Boolean).pop(), ...d });
      });
    }
    for (const list of byRoute) list.sort((a, b) => a.position - b.position);
    // Half done: each route's first 10 stops completed (transit, then complete), the 11th active.
    const at = () => new Date().toISOString();
    const id = (t, a) => `replan-${t.id}-${a}`;
    const done = byRoute.flatMap((list) => list.slice(0, DONE));
    await commands(
      api,
      admin,
      done.flatMap((t) => [
        { task: t.url, action: "transit", external_id: id(t, "transit"), time: at() },
        { task: t.url, action: "complete", external_id: id(t, "complete"), time: at() },
      ]),
    );
    await commands(
      api,
      admin,
      byRoute.map((list) => ({
        task: list[DONE].url,
        action: "activate",
        external_id: id(list[DONE], "activate"),
        time: at(),
      })),
    );
    // Each worker at its active stop, now.
    for (const [w, worker] of workers.entries()) {
      const r = await api("/positions/", {
        token: worker.token,
        body: { location: byRoute[w][DONE].address.location, time: at() },
      });
      if (r.status !== 202) throw new Error(`POST /positions/: ${r.status} ${r.text.slice(0, 300)}`);
    }
    // The positions reach D1 within a second (the stream object's copy, contract §28).
    await new Promise((res) => setTimeout(res, 2000));

    const solve = async (body) => {
      const t0 = performance.now();
      const r = await api("/route_optimizations/", { token: admin, body: { routes, apply: false, ...body } });
      if (r.status !== 202)
        throw new Error(`POST /route_optimizations/: ${r.status} ${r.text.slice(0, 300)}`);
      const o = await finished(api, admin, r.body.id);
      const seconds = (performance.now() - t0) / 1000;
      const stops = o?.result?.routes?.reduce((n, x) => n + x.stops.length, 0) ?? 0;
      const unassigned = o?.result?.unassigned?.length ?? 0;
      log(
        "replan",
        JSON.stringify(body),
        o?.state,
        seconds,
        "stops",
        stops,
        "unassigned",
        unassigned,
        o?.error_message ?? "",
      );
      if (o?.state !== "completed")
        throw new Error(`optimization ${JSON.stringify(body)}: ${o?.state} ${o?.error_message}`);
      return { o, seconds, stops, unassigned };
    };
    const fromNow = await solve({ from_now: true });
    const remaining = WORKERS * (PER_ROUTE - DONE);
    // Every route starts with its active stop; the finished ones are not in the problem.
    const firstActive = fromNow.o.result.routes.every(
      (x) => x.stops[0]?.task === byRoute[routes.indexOf(x.route)][DONE].url,
    );
    report.figure("replan.from_now.seconds.1000", fromNow.seconds, {
      label: `1,000-stop day of ${WORKERS} workers, half done, re-optimized from now to a proposal`,
      unit: "s",
      target: "<= 30",
      ok: fromNow.stops + fromNow.unassigned === remaining && firstActive,
    });
    const scratch = await solve({});
    const iterations = settings.optimizationIterations;
    log(
      "replan distance: from now",
      fromNow.o.result.distance_m,
      "from scratch",
      scratch.o.result.distance_m,
    );
    report.figure("replan.from_now.km.1000", fromNow.o.result.distance_m / 1000, {
      label: `its distance (${iterations} iterations; from the workers' positions, active stops first)`,
      unit: "km",
      target: "reference",
    });
    report.diagnostic("replan.scratch.km.1000", scratch.o.result.distance_m / 1000, {
      label: `the remaining ${remaining} stops from scratch (depots, shift start), same budget`,
      unit: "km",
    });
    report.diagnostic("replan.scratch.seconds.1000", scratch.seconds, {
      label: "that solve, POST to completed proposal",
      unit: "s",
    });
  },
};
