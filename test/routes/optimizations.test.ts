import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { PDFDocument } from "@cantoo/pdf-lib";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { maxLocations, optimizationBytes } from "../../src/services/route-optimizations/build";
import { runOptimization } from "../../src/services/route-optimizations/run";
import { addUser, BASE, call, expectStatus, newAccount, type TestAccount } from "../helpers";
import { expectNoOverlap, pdfPages } from "../pdf";
import { stored } from "../stored";

// Points around Tallinn (lon, lat): a depot and stops a few kilometres apart.
const DEPOT: [number, number] = [24.75, 59.44];
const STOPS: [number, number][] = [
  [24.7, 59.43],
  [24.8, 59.45],
  [24.72, 59.46],
  [24.78, 59.41],
  [24.66, 59.44],
  [24.83, 59.43],
];
const at = (p: [number, number], raw = "") => ({
  raw_address: raw || `${p[1]},${p[0]}`,
  location: { type: "Point", coordinates: p },
});

async function planned(acc: TestAccount, opts: { windows?: boolean } = {}) {
  const worker = await addUser(acc, "worker");
  const roles = await call("/account_roles/?page_size=100", { token: acc.admin.token });
  const role = roles.body.results.find((r: any) => r.user === worker.user);
  await call(`/account_roles/${role.id}/`, {
    method: "PATCH",
    token: acc.admin.token,
    body: { start_address: at(DEPOT, "Depot"), end_address: at(DEPOT, "Depot"), vehicle_capacity: [100] },
  });
  const route = await call("/routes/", {
    token: acc.admin.token,
    body: { name: "Tallinn", assignee: worker.user, date: "2030-06-03" },
  });
  expectStatus(route, 201);
  const tasks = [];
  for (const [i, p] of STOPS.entries()) {
    const t = await call("/tasks/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        category: "drop_off",
        address: at(p),
        duration: "00:10:00",
        ...(i < 3 ? { route: route.body.url } : {}),
        ...(opts.windows && i === 0
          ? { complete_after: "2030-06-03T05:00:00Z", complete_before: "2030-06-03T06:00:00Z" }
          : {}),
      },
    });
    expectStatus(t, 201);
    tasks.push(t.body);
  }
  return { worker, route: route.body, tasks };
}

async function finished(acc: TestAccount, id: string) {
  for (let i = 0; i < 100; i++) {
    const r = await call(`/route_optimizations/${id}/`, { token: acc.admin.token });
    if (r.body.state === "completed" || r.body.state === "failed") return r.body;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error("the optimization did not finish");
}

describe("/route_optimizations/ (contract §16)", () => {
  it("solves from the queue and applies route, position and assignee through commands", async () => {
    const acc = await newAccount();
    const { worker, route, tasks } = await planned(acc);
    const noLocation = await call("/tasks/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        category: "drop_off",
        address: { raw_address: "zzqx nowhere at all 00000" },
      },
    });
    const r = await call("/route_optimizations/", {
      token: acc.admin.token,
      body: { routes: [route.url], tasks: [...tasks.slice(3).map((t) => t.url), noLocation.body.url] },
    });
    expectStatus(r, 202);
    expect(r.body.state).toBe("queued");
    const done = await finished(acc, r.body.id);
    expect(done.state, done.error_message).toBe("completed");
    const stops = done.result.routes[0].stops;
    expect(stops.map((s: any) => s.task).sort()).toEqual(tasks.map((t) => t.url).sort());
    expect(done.result.unassigned).toEqual([{ task: noLocation.body.url, reason: "unreachable" }]);
    expect(done.result.distance_m).toBeCloseTo(done.result.routes[0].distance_m, 6);
    expect(done.result.routes[0].distance_m).toBeGreaterThan(0);
    // Applied: the tasks are on the route in the solved order, assigned to the route's worker.
    const read = await call(`/routes/${route.id}/`, { token: acc.admin.token });
    expect(read.body.tasks).toEqual(stops.map((s: any) => s.task));
    expect(read.body.distance_m).toBeCloseTo(done.result.routes[0].distance_m, 6);
    for (const t of tasks) {
      const task = await call(`/tasks/${t.id}/`, { token: acc.admin.token });
      expect(task.body.assignee).toBe(worker.user);
    }
    const cmds = await call(`/task_commands/?task=${tasks[4].id}`, { token: acc.admin.token });
    expect(cmds.body.results.map((c: any) => c.action).sort()).toEqual(["assign", "update"]);
    // The report: a page naming the route and each stop.
    const report = await call(`/route_optimizations/${r.body.id}/report/`, { token: acc.admin.token });
    expectStatus(report, 200);
    expect(report.headers.get("Content-Type")).toMatch(/^text\/html/);
    expect(report.text).toContain("Tallinn");
    expect(report.text).toContain("Unassigned tasks");
    // A map: inline SVG (the page's CSP loads nothing), one numbered disc per located stop.
    expect(report.text).toMatch(/<svg class="map" viewBox="0 0 /);
    expect(report.text).toContain(">1</text>");
    // The PDF: by Accept or ?format=pdf; it parses back, and its text holds the route's name.
    for (const [query, headers] of [
      ["?format=pdf", {}],
      ["", { Accept: "application/pdf" }],
    ] as const) {
      const res = await exports.default.fetch(
        new Request(`https://api.test/route_optimizations/${r.body.id}/report/${query}`, {
          headers: { Authorization: `Bearer ${acc.admin.token}`, ...headers },
        }),
      );
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Type")).toBe("application/pdf");
      const bytes = new Uint8Array(await res.arrayBuffer());
      expect(new TextDecoder().decode(bytes.slice(0, 5))).toBe("%PDF-");
      const doc = await PDFDocument.load(bytes);
      expect(doc.getPageCount()).toBeGreaterThanOrEqual(1);
      expect(doc.getTitle()).toMatch(/^Route optimization /);
      const pages = await pdfPages(bytes);
      const text = pages.map((p) => p.text).join("\n");
      expect(text).toContain("Tallinn");
      // The unassigned task's reason in words, as the HTML report says it.
      expect(text).toContain("no location, or no road to it");
      for (const [i, p] of pages.entries()) expectNoOverlap(p, `page ${i + 1}`);
    }
    // A redelivered message after completion changes nothing; a crashed run re-applies nothing twice.
    await runOptimization(env, {
      accountId: acc.account.id,
      optimizationId: r.body.id,
      baseUrl: "https://api.test",
    });
    await stored
      .prepare("UPDATE route_optimizations SET state = 'running' WHERE id = ?")
      .bind(r.body.id)
      .run();
    await runOptimization(env, {
      accountId: acc.account.id,
      optimizationId: r.body.id,
      baseUrl: "https://api.test",
    });
    const again = await call(`/task_commands/?task=${tasks[4].id}`, { token: acc.admin.token });
    expect(again.body.results).toHaveLength(2);
  });

  it("refuses other accounts' routes, tasks on routes not given, finished tasks, too many routes", async () => {
    const acc = await newAccount();
    const { route, tasks } = await planned(acc);
    const other = await newAccount();
    const theirs = await call("/routes/", { token: other.admin.token, body: { name: "x" } });
    const bad = await call("/route_optimizations/", {
      token: acc.admin.token,
      body: { routes: [theirs.body.url] },
    });
    expectStatus(bad, 400);
    expect(bad.body.routes).toEqual(["Invalid hyperlink - Object does not exist."]);
    const second = await call("/routes/", { token: acc.admin.token, body: { name: "second" } });
    const elsewhere = await call("/route_optimizations/", {
      token: acc.admin.token,
      body: { routes: [second.body.url], tasks: [tasks[0].url] },
    });
    expectStatus(elsewhere, 400);
    expect(elsewhere.body.tasks[0]).toMatch(/not part of this optimization/);
    await call("/task_commands/", {
      token: acc.admin.token,
      body: {
        task: tasks[5].url,
        external_id: `c-${crypto.randomUUID()}`,
        time: new Date().toISOString(),
        action: "cancel",
      },
    });
    const finishedTask = await call("/route_optimizations/", {
      token: acc.admin.token,
      body: { routes: [route.url], tasks: [tasks[5].url] },
    });
    expectStatus(finishedTask, 400);
    const many = Array.from({ length: 201 }, () => `https://api.test/routes/${crypto.randomUUID()}/`);
    const tooMany = await call("/route_optimizations/", { token: acc.admin.token, body: { routes: many } });
    expectStatus(tooMany, 400);
    expect(tooMany.body.routes[0]).toMatch(/at most 200/);
    const list = await call("/route_optimizations/", { token: acc.admin.token });
    expect(list.body.results).toEqual([]);
  });

  it("a window that cannot be met leaves the task unassigned with reason time_window, without apply nothing moves", async () => {
    const acc = await newAccount();
    const { route, tasks } = await planned(acc, { windows: true });
    // Shifts are 08:00–17:00 UTC by default; the first task's window closes at 06:00.
    const r = await call("/route_optimizations/", {
      token: acc.admin.token,
      body: { routes: [route.url], apply: false },
    });
    const done = await finished(acc, r.body.id);
    expect(done.state).toBe("completed");
    expect(done.result.unassigned).toEqual([{ task: tasks[0].url, reason: "time_window" }]);
    const t = await call(`/tasks/${tasks[1].id}/`, { token: acc.admin.token });
    expect(t.body.assignee).toBeNull();
  });

  it("refuses, before any work, an optimization whose travel matrices would not fit in the Worker's memory (400 naming the limit)", async () => {
    // A depot's day at the limits fits: 2,000 visits and 200 routes with their own depots.
    expect(maxLocations(128, 2000)).toBeGreaterThanOrEqual(2000 + 2 * 200);
    expect(optimizationBytes(2400, 2000)).toBeLessThan(128 * 2 ** 20);
    expect(optimizationBytes(4000, 2000)).toBeGreaterThan(128 * 2 ** 20);
    const acc = await newAccount();
    const { route } = await planned(acc);
    // The same request where one solve may take only 32 MB: 4 locations (the depot and 3 stops) are too many.
    const tight = { ...env, OPTIMIZATION_MEMORY_MB: "32" } as Env;
    const ctx = createExecutionContext();
    const res = await createApp().fetch(
      new Request(`${BASE}/route_optimizations/`, {
        method: "POST",
        headers: { Authorization: `Bearer ${acc.admin.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ routes: [route.url] }),
      }),
      tight,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { tasks: string[] };
    expect(body.tasks).toHaveLength(1);
    expect(body.tasks[0]).toMatch(
      /4 distinct locations with 3 visits would not fit in the Worker's 32 MB of memory/,
    );
    // Nothing was queued or stored.
    const list = await call("/route_optimizations/", { token: acc.admin.token });
    expect(list.body.results).toEqual([]);
  });
});
