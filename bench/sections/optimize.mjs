// Section 8: route optimization through the API: 1,000 tasks on 50 routes, solved by the queue
// consumer with the bench's budget (ROUTE_OPTIMIZATION_ITERATIONS = settings.optimizationIterations)
// and applied through commands; then the same instance solved offline, in Node, by the service's
// own instance builder and solver with the same seed and iterations: the plan through the API
// must be as good (issue 31: the distance of both, printed in one run).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build as esbuild } from "esbuild";
import { log, makeAccount } from "../lib/harness.mjs";

/** Every page of a list endpoint. */
async function all(api, path, token) {
  const out = [];
  let next = `${path}${path.includes("?") ? "&" : "?"}page_size=500`;
  while (next) {
    const r = await api(next.replace(/^https?:\/\/[^/]+/, ""), { token });
    if (r.status !== 200) throw new Error(`GET ${next}: ${r.status} ${r.text.slice(0, 300)}`);
    out.push(...(r.body?.results ?? []));
    next = r.body?.next ?? null;
  }
  return out;
}

/**
 * The optimization solved again offline: the service's buildInstance (rows as the consumer
 * reads them: tasks in id order, the routes as given), its offline matrix and solver, its seed
 * for the optimization's id and the same iterations.
 */
async function offlineOptimization(api, acc, routeUrls, optimizationId, iterations) {
  const dir = mkdtempSync(join(tmpdir(), "fd-bench-vrp-"));
  try {
    await esbuild({
      stdin: {
        contents: `export { buildInstance, collectPoints, seedOf, SOLVE_OPTIONS } from "./src/services/route-optimizations/build.ts"; export { OfflineMatrix } from "./src/services/routing/index.ts"; export { solve } from "./src/solver/index.ts";`,
        resolveDir: process.cwd(),
        loader: "ts",
      },
      bundle: true,
      format: "esm",
      platform: "node",
      outfile: join(dir, "service.mjs"),
      logLevel: "error",
    });
    const { buildInstance, collectPoints, seedOf, SOLVE_OPTIONS, OfflineMatrix, solve } = await import(
      pathToFileURL(join(dir, "service.mjs")).href
    );
    const account = (await api(new URL(acc.account.url).pathname, { token: acc.token })).body;
    const byUrl = new Map((await all(api, "/routes/", acc.token)).map((r) => [r.url, r]));
    const routes = routeUrls.map((u) => {
      const r = byUrl.get(u);
      return { id: r.id, date: r.date, assignee_id: null, start_address: null, end_address: null };
    });
    const seconds = (hms) => hms.split(":").reduce((a, x) => a * 60 + Number(x), 0);
    const tasks = (await all(api, "/tasks/", acc.token))
      .filter((t) => t.route)
      .map((t) => ({
        id: t.id,
        state: t.state,
        category: t.category,
        order_id: null,
        address: JSON.stringify(t.address),
        duration_seconds: t.duration ? seconds(t.duration) : null,
        complete_after: t.complete_after ? Date.parse(t.complete_after) : null,
        complete_before: t.complete_before ? Date.parse(t.complete_before) : null,
        metafields: JSON.stringify(t.metafields ?? {}),
      }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const points = collectPoints(routes, tasks);
    const built = buildInstance({
      routes,
      tasks,
      account,
      assignees: new Map(),
      matrix: await new OfflineMatrix(40).grid(points.points),
      points,
      ignoreTimeWindows: false,
      objective: "distance",
      today: routes[0].date,
    });
    const t0 = performance.now();
    const solution = solve(built.instance, { ...SOLVE_OPTIONS, seed: seedOf(optimizationId), iterations });
    return {
      distance: solution.distance,
      routes: solution.routes.length,
      unassigned: solution.unassigned.length,
      seconds: (performance.now() - t0) / 1000,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const optimize = {
  n: 8,
  name: "optimize",
  ids: [
    "optimize.1000x50.seconds",
    "optimize.1000x50.api_km",
    "optimize.1000x50.offline_km",
    "optimize.1000x50.api_vs_offline",
  ],
  async run({ api, report, settings }) {
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
    if (body?.state !== "completed") return;
    const iterations = settings.optimizationIterations;
    const offline = await offlineOptimization(api, acc, routes, opt.body.id, iterations);
    const through = body.result.distance_m;
    log("optimization distance: API", through, "offline", offline.distance, offline);
    report.diagnostic("optimize.1000x50.api_km", through / 1000, {
      label: `distance of the plan through the API (${iterations} iterations)`,
      unit: "km",
    });
    report.diagnostic("optimize.1000x50.offline_km", offline.distance / 1000, {
      label: `the same instance solved offline in Node (${iterations} iterations, same seed)`,
      unit: "km",
    });
    report.figure("optimize.1000x50.api_vs_offline", through / offline.distance, {
      label: "route optimization: distance through the API / offline at the same iterations",
      unit: "ratio",
      target: "<= 1.01",
    });
  },
};
