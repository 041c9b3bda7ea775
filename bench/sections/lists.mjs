// Sections 4 and 5: a large POST /orders/, and the task list's latency as the account grows.
import { log, makeAccount, seedTasks, taskBody } from "../lib/harness.mjs";

export const orders = {
  n: 4,
  name: "orders",
  ids: ["orders.100x5.seconds"],
  async run({ api, report, small }) {
    const body = Array.from({ length: 100 }, (_, i) => ({
      account: small.account.url,
      reference: `o-${i}`,
      tasks_data: Array.from({ length: 5 }, (_, k) => taskBody(i * 5 + k)),
    }));
    const t0 = performance.now();
    const r = await api("/orders/", { token: small.token, body });
    const s = (performance.now() - t0) / 1000;
    log("orders", r.status, s);
    if (r.status !== 201) throw new Error(`POST /orders/: ${r.status} ${r.text.slice(0, 300)}`);
    report.figure("orders.100x5.seconds", s, {
      label: "POST /orders/ with 100 orders x 5 tasks",
      unit: "s",
      target: "< 2",
    });
  },
};

/** GET /tasks/ with state + assignee + ordering: p50 at BENCH_BIG_TASKS tasks vs at 1k. */
export const list = {
  n: 5,
  name: "list",
  ids: ["list.tasks.p50_ratio", "list.tasks.p50_ms", "list.tasks.small_p50_ms"],
  async run({ api, run, report, small, svc, settings }) {
    const big = await makeAccount(api, "big");
    const t0 = performance.now();
    await seedTasks(api, big, settings.bigTasks);
    log(`seeded ${settings.bigTasks} tasks in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const q = (acc) =>
      `${svc.url}/tasks/?state=assigned&assignee=${encodeURIComponent(acc.worker.url)}&ordering=-created_at&page_size=50`;
    const atSmall = await run({ url: q(small), headers: { Authorization: `Bearer ${small.token}` } });
    const atBig = await run({ url: q(big), headers: { Authorization: `Bearer ${big.token}` } });
    const ratio = atBig.latency.p50 / Math.max(atSmall.latency.p50, 1);
    log("list p50 at 1k", atSmall.latency.p50, "ms; at big", atBig.latency.p50, "ms");
    report.figure("list.tasks.p50_ratio", ratio, {
      label: `GET /tasks/ state+assignee+ordering: p50 at ${settings.bigTasks} vs 1k tasks`,
      unit: "ratio",
      target: "<= 1.5",
      ok: atBig.non2xx === 0 && atSmall.non2xx === 0,
    });
    report.diagnostic("list.tasks.p50_ms", atBig.latency.p50, {
      unit: "ms",
      label: "the list's p50, large account",
    });
    report.diagnostic("list.tasks.small_p50_ms", atSmall.latency.p50, {
      unit: "ms",
      label: "the list's p50, 1k tasks",
    });
  },
};
