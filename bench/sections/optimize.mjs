// Section 8: route optimization through the API: 1,000 tasks on 50 routes, solved by the queue
// consumer with the configured budget (ROUTE_OPTIMIZATION_ITERATIONS) and applied through commands.
import { log, makeAccount } from "../lib/harness.mjs";

export const optimize = {
  n: 8,
  name: "optimize",
  ids: ["optimize.1000x50.seconds"],
  async run({ api, report }) {
    const acc = await makeAccount(api, "optimize");
    const routes = [];
    for (let i = 0; i < 50; i++) {
      const r = await api("/routes/", {
        token: acc.token,
        body: { name: `Route ${i + 1}`, date: "2030-06-03" },
      });
      if (r.status !== 201) throw new Error(`POST /routes/: ${r.status} ${r.text.slice(0, 300)}`);
      routes.push(r.body.url);
    }
    // Points within ~15 km of Tallinn's centre, deterministic.
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let o = 0; o < 2; o++) {
      const tasks_data = Array.from({ length: 500 }, (_, k) => ({
        category: "drop_off",
        route: routes[(o * 500 + k) % 50],
        duration: "00:05:00",
        address: {
          raw_address: `stop ${o * 500 + k}`,
          location: {
            type: "Point",
            coordinates: [24.75 + (rnd() - 0.5) * 0.5, 59.44 + (rnd() - 0.5) * 0.25],
          },
        },
      }));
      const r = await api("/orders/", { token: acc.token, body: { account: acc.account.url, tasks_data } });
      if (r.status !== 201) throw new Error(`optimize seed: ${r.status} ${r.text.slice(0, 300)}`);
    }
    const t0 = performance.now();
    const opt = await api("/route_optimizations/", { token: acc.token, body: { routes } });
    if (opt.status !== 202)
      throw new Error(`POST /route_optimizations/: ${opt.status} ${opt.text.slice(0, 300)}`);
    let body = opt.body;
    const deadline = Date.now() + 600_000;
    while (!["completed", "failed"].includes(body?.state) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      body = (await api(`/route_optimizations/${opt.body.id}/`, { token: acc.token })).body;
    }
    const s = (performance.now() - t0) / 1000;
    const stops = body?.result?.routes?.reduce((n, r) => n + r.stops.length, 0) ?? 0;
    const unassigned = body?.result?.unassigned?.length ?? 0;
    log("optimization", body?.state, s, "stops", stops, "unassigned", unassigned, body?.error_message ?? "");
    report.figure("optimize.1000x50.seconds", s, {
      label: "1,000 tasks on 50 routes optimized and applied through the API",
      unit: "s",
      target: "< 300",
      ok: body?.state === "completed" && stops + unassigned === 1000,
    });
  },
};
