// Section 15: the dispatch console (contract §26) in Chromium, driven by playwright-core: an
// account of its own with 50 active workers and a day of 2,000 tasks (1,600 on the workers'
// routes, 400 unassigned), opened by a manager at /console/:
// - console.render_ms.2000x50: from the day's data having arrived (the app's last list answer)
//   to the board painted and usable (the app's own marks, read from the page);
// - console.js_kb_gz: the JavaScript the page loaded to that point (the map library is not part
//   of it), each file gzipped at level 9 as a CDN would serve it;
// - console.live.delay_ms.p99: from a command's 2xx answer (sent by the API, as another
//   dispatcher or a phone would) to the worker's list on the board holding the moved task, a
//   MutationObserver in the page noting when (20 commands);
// - console.heap_mb.2000x50: the page's used JS heap with that day open, after a garbage collection.
// Needs /usr/bin/chromium (CHROMIUM_PATH overrides it).
import { gzipSync } from "node:zlib";
import { log, percentile } from "../lib/harness.mjs";

const WORKERS = 50;
const TASKS = 2000;
const UNASSIGNED = 400;
const MOVES = 20;

export const consoleSection = {
  n: 15,
  name: "console",
  ids: [
    "console.render_ms.2000x50",
    "console.js_kb_gz",
    "console.live.delay_ms.p99",
    "console.heap_mb.2000x50",
  ],
  async run(ctx) {
    const { api, svc, report } = ctx;
    const { chromium } = await import("playwright-core");
    const stamp = Date.now();
    const email = `bench-console-${stamp}@example.test`;
    const password = "bench-console-password";
    const must = (r, what) => {
      if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 300)}`);
      return r.body;
    };
    must(await api("/accounts/", { body: { name: "Console bench", email, password } }), "sign-up");
    const admin = must(await api("/authenticate/", { body: { username: email, password } }), "sign-in").token;
    const me = must(await api("/users/me/", { token: admin }), "me");
    const managerEmail = `manager-${email}`;
    must(
      await api("/users/", {
        token: admin,
        body: { email: managerEmail, name: "Bench manager", password, role: "manager" },
      }),
      "manager",
    );
    const workers = [];
    for (let i = 0; i < WORKERS; i += 10) {
      const made = await Promise.all(
        Array.from({ length: Math.min(10, WORKERS - i) }, (_, k) =>
          api("/users/", {
            token: admin,
            body: {
              email: `w${i + k}-${email}`,
              name: `Worker ${String(i + k + 1).padStart(2, "0")}`,
              password,
              role: "worker",
            },
          }),
        ),
      );
      for (const r of made) workers.push(must(r, "worker"));
    }
    const day = new Date().toISOString().slice(0, 10);
    const perWorker = (TASKS - UNASSIGNED) / WORKERS;
    const body = (i) => {
      const lon = 24.6 + (i % 97) * 0.006;
      const lat = 60.1 + (i % 89) * 0.004;
      const w = i < UNASSIGNED ? null : workers[Math.floor((i - UNASSIGNED) / perWorker)];
      const hour = 8 + (i % 9);
      return {
        category: "drop_off",
        address: {
          raw_address: `Bench street ${i}, Helsinki`,
          location: { type: "Point", coordinates: [lon, lat] },
        },
        contact: { name: `Customer ${i}`, phones: [`+3584000${String(i).padStart(5, "0")}`] },
        complete_after: `${day}T${String(hour).padStart(2, "0")}:00:00Z`,
        complete_before: `${day}T${String(hour + 2).padStart(2, "0")}:00:00Z`,
        ...(w ? { assignee: w.url, position: ((i - UNASSIGNED) % perWorker) + 1 } : {}),
      };
    };
    const orders = [];
    for (let i = 0; i < TASKS; i += 500) {
      orders.push({
        account: me.account,
        reference: `console-${i}`,
        tasks_data: Array.from({ length: Math.min(500, TASKS - i) }, (_, k) => body(i + k)),
      });
    }
    must(await api("/orders/", { token: admin, body: orders }), "seed orders");
    log(`console: ${WORKERS} workers, ${TASKS} tasks on ${day}`);

    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
    try {
      const context = await browser.newContext({ viewport: { width: 1600, height: 1000 }, locale: "en-GB" });
      const page = await context.newPage();
      const scripts = [];
      page.on("response", async (r) => {
        if (r.request().resourceType() === "script" && r.url().startsWith(svc.url)) {
          scripts.push(r.body().then((b) => gzipSync(b, { level: 9 }).length));
        }
      });
      await page.goto(`${svc.url}/console/?lang=en`);
      await page.getByRole("textbox", { name: "Email" }).fill(managerEmail);
      await page.getByRole("textbox", { name: "Password" }).fill(password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForFunction(() => window.__consoleTimings?.renderedAt > 0, null, { timeout: 60_000 });
      // The lists render only their windows; each says how many tasks it holds.
      const items = await page
        .locator("ul[data-count]")
        .evaluateAll((uls) => uls.reduce((n, ul) => n + Number(ul.dataset.count), 0));
      if (items !== TASKS) throw new Error(`the board holds ${items} tasks, not ${TASKS}`);
      const t = await page.evaluate(() => window.__consoleTimings);
      const renderMs = t.renderedAt - t.dataAt;
      const jsBytes = (await Promise.all(scripts)).reduce((a, b) => a + b, 0);
      await page.getByRole("status").filter({ hasText: "Live" }).waitFor({ timeout: 10_000 });

      // Moves from elsewhere: each unassigned task to a worker, its answer's time against the
      // moment the page shows it in that worker's lane.
      const list = must(
        await api(`/tasks/?state=unassigned&day=${day}&page_size=${MOVES}`, { token: admin }),
        "unassigned",
      ).results;
      const delays = [];
      for (const [k, task] of list.entries()) {
        const worker = workers[k % WORKERS];
        const laneId = `lane-${worker.url.replace(/\W+/g, "-")}`;
        // The lists render only their windows, so the moment is when the worker's list holds one
        // more task (its count and rows are redrawn in the same render).
        const seen = page.evaluate(
          ([lane]) =>
            new Promise((resolve) => {
              const ul = document.querySelector(`section[aria-labelledby="${lane}"] ul`);
              const before = Number(ul.dataset.count);
              const observer = new MutationObserver(() => {
                if (Number(ul.dataset.count) === before + 1) {
                  observer.disconnect();
                  resolve(Date.now());
                }
              });
              observer.observe(ul, { attributes: true, attributeFilter: ["data-count"] });
              setTimeout(() => {
                observer.disconnect();
                resolve(null);
              }, 5000);
            }),
          [laneId],
        );
        await page.waitForTimeout(50);
        const r = await api("/task_commands/", {
          token: admin,
          body: {
            task: task.url,
            action: "assign",
            assignee: worker.url,
            external_id: `bench-console-${stamp}-${k}`,
            time: new Date().toISOString(),
          },
        });
        const answered = Date.now();
        must(r, "assign");
        const at = await seen;
        delays.push(at === null ? 5000 : Math.max(0, at - answered));
      }

      const cdp = await context.newCDPSession(page);
      await cdp.send("HeapProfiler.collectGarbage");
      const heap = await cdp.send("Runtime.getHeapUsage");

      report.figure("console.render_ms.2000x50", renderMs, {
        label: `console: the day's data to a usable board, ${TASKS} tasks × ${WORKERS} workers`,
        unit: "ms",
        target: "<= 1500",
      });
      report.figure("console.js_kb_gz", jsBytes / 1024, {
        label: "console: its JavaScript without the map library, gzipped",
        unit: "KB",
        target: "<= 150",
      });
      report.figure("console.live.delay_ms.p99", percentile(delays, 99), {
        label: `console: a command's answer to its move on the board, p99 (${MOVES} commands)`,
        unit: "ms",
        target: "<= 1000",
      });
      report.figure("console.heap_mb.2000x50", heap.usedSize / 1024 / 1024, {
        label: `console: the page's used JS heap with the ${TASKS}-task day open`,
        unit: "MB",
        target: "<= 200",
      });
      log(
        `console: render ${renderMs.toFixed(0)} ms, JS ${(jsBytes / 1024).toFixed(1)} KB gz, live p99 ${percentile(delays, 99)} ms, heap ${(heap.usedSize / 1048576).toFixed(1)} MB`,
      );
    } finally {
      await browser.close();
    }
  },
};
