// Section 16: the field app (contract §27) in Chromium, driven by playwright-core, at 360×640:
// - app.shell_kb_gz: the JavaScript and CSS of the first screen (signed out, as a phone first
//   opens /app/), each file gzipped at level 9 as a CDN would serve it;
// - app.first_load_ms.slow4g: a worker signed in the day before opens the app with nothing of it
//   cached (no HTTP cache, no service worker, no tasks kept), under Chromium's "Slow 4G"
//   (562.5 ms latency, 1.44 Mbit/s down, 675 kbit/s up; DevTools' preset), to the day's "Today"
//   list shown from the network;
// - app.offline_load_ms: the second load with the network off, to "Today" from the phone's copy;
// - app.offline_sync.seconds_100: 100 actions made offline on 20 tasks (accept, start, arrived,
//   the required metafield's update and complete on each), from the network's return to "All
//   sent"; every command then checked through the API: applied once, in order.
// Needs /usr/bin/chromium (CHROMIUM_PATH overrides it).
import { gzipSync } from "node:zlib";
import { log } from "../lib/harness.mjs";

const TASKS = 20;
const SLOW_4G = {
  offline: false,
  latency: 150 * 3.75,
  downloadThroughput: ((1.6 * 1000 * 1000) / 8) * 0.9,
  uploadThroughput: ((750 * 1000) / 8) * 0.9,
};

export const appSection = {
  n: 16,
  name: "field app",
  ids: ["app.shell_kb_gz", "app.first_load_ms.slow4g", "app.offline_load_ms", "app.offline_sync.seconds_100"],
  async run(ctx) {
    const { api, svc, report } = ctx;
    const { chromium } = await import("playwright-core");
    const stamp = Date.now();
    const email = `bench-app-${stamp}@example.test`;
    const password = "bench-app-password";
    const must = (r, what) => {
      if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 300)}`);
      return r.body;
    };
    must(await api("/accounts/", { body: { name: "Field app bench", email, password } }), "sign-up");
    const admin = must(await api("/authenticate/", { body: { username: email, password } }), "sign-in").token;
    const me = must(await api("/users/me/", { token: admin }), "me");
    must(
      await api("/metafields/", {
        token: admin,
        body: {
          key: "parcels",
          label: "Parcels delivered",
          applies_to: "tasks",
          value_type: "integer",
          is_required_before_complete: true,
        },
      }),
      "metafield",
    );
    const workerEmail = `w-${email}`;
    const worker = must(
      await api("/users/", {
        token: admin,
        body: { email: workerEmail, name: "Bench worker", password, role: "worker" },
      }),
      "worker",
    );
    const day = new Date().toISOString().slice(0, 10);
    const tasks = must(
      await api("/orders/", {
        token: admin,
        body: {
          account: me.account,
          reference: `bench-app-${stamp}`,
          tasks_data: Array.from({ length: TASKS }, (_, i) => ({
            category: "drop_off",
            address: {
              raw_address: `Field street ${i + 1}, Tampere`,
              location: { type: "Point", coordinates: [23.7 + i * 0.003, 61.49 + i * 0.002] },
            },
            contact: { name: `Customer ${i + 1}`, phones: ["+358401234567"] },
            complete_after: `${day}T00:00:00Z`,
            complete_before: `${day}T23:59:00Z`,
            description: `Parcel ${i + 1}`,
          })),
        },
      }),
      "order",
    ).tasks;
    must(
      await api("/task_commands/", {
        token: admin,
        body: tasks.map((task, i) => ({
          task,
          external_id: `bench-app-assign-${stamp}-${i}`,
          time: new Date().toISOString(),
          action: "assign",
          assignee: worker.url,
          task_data: { position: i + 1 },
        })),
      }),
      "assign",
    );

    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-sync",
      ],
    });
    try {
      const context = await browser.newContext({
        viewport: { width: 360, height: 640 },
        isMobile: true,
        hasTouch: true,
      });
      let page = await context.newPage();

      // The first screen's JavaScript and CSS, gzipped.
      const shell = [];
      page.on("response", async (r) => {
        const type = r.request().resourceType();
        if (type === "script" || type === "stylesheet")
          shell.push(r.body().then((b) => gzipSync(b, { level: 9 }).length));
      });
      await page.goto(`${svc.url}/app/?lang=en`);
      await page.getByRole("textbox", { name: "Email" }).waitFor();
      const bytes = (await Promise.all(shell)).reduce((a, b) => a + b, 0);
      page.removeAllListeners("response");
      report.figure("app.shell_kb_gz", bytes / 1024, {
        unit: "KB",
        target: "<= 120",
        label: "field app: JavaScript and CSS of the first screen, gzipped",
      });

      // Signed in "the day before"; then nothing of the app kept but the session.
      await page.getByRole("textbox", { name: "Email" }).fill(workerEmail);
      await page.getByRole("textbox", { name: "Password" }).fill(password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("list", { name: "Today" }).waitFor({ timeout: 60_000 });
      await page.evaluate(async () => {
        for (const r of await navigator.serviceWorker.getRegistrations()) await r.unregister();
        for (const k of await caches.keys()) await caches.delete(k);
        const db = await new Promise((ok, no) => {
          const o = indexedDB.open("field-app");
          o.onsuccess = () => ok(o.result);
          o.onerror = () => no(o.error);
        });
        await new Promise((ok) => {
          const tx = db.transaction("kv", "readwrite");
          for (const k of ["tasks", "documents", "metafields"]) tx.objectStore("kv").delete(k);
          tx.oncomplete = ok;
        });
        db.close();
      });
      await page.close();
      page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send("Network.enable");
      await cdp.send("Network.clearBrowserCache");
      await cdp.send("Network.emulateNetworkConditions", SLOW_4G);
      let t0 = Date.now();
      await page.goto(`${svc.url}/app/?lang=en`);
      await page.getByRole("listitem", { name: "Field street 1", exact: true }).waitFor({ timeout: 60_000 });
      const firstLoad = Date.now() - t0;
      report.figure("app.first_load_ms.slow4g", firstLoad, {
        unit: "ms",
        target: "<= 3000",
        label: "field app: first load to a usable Today under Slow 4G",
      });
      await cdp.send("Network.emulateNetworkConditions", {
        ...SLOW_4G,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput: -1,
      });
      // What the task pages need offline (documents, the required metafields) arrives after the
      // list: wait for it as a phone left open would, before the network goes.
      await page.waitForLoadState("networkidle");
      await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
      // The service worker has precached the app (it installs on the first load).
      await page.waitForFunction(async () => (await caches.keys()).length > 0);

      await context.setOffline(true);
      t0 = Date.now();
      await page.reload();
      await page.getByRole("listitem", { name: "Field street 1", exact: true }).waitFor();
      report.figure("app.offline_load_ms", Date.now() - t0, {
        unit: "ms",
        target: "<= 1000",
        label: "field app: second load, offline, to a usable Today",
      });

      // 100 actions offline: five on each of the 20 tasks.
      const press = (name) => page.getByRole("button", { name, exact: true }).click();
      for (let i = 1; i <= TASKS; i++) {
        await page
          .getByRole("listitem", { name: `Field street ${i}`, exact: true })
          .getByRole("link")
          .click();
        await page.getByRole("heading", { name: `Field street ${i}`, exact: true }).waitFor();
        await press("Accept");
        await press("Start");
        await press("Arrived");
        await press("Complete");
        const dialog = page.getByRole("dialog", { name: "Proof of delivery" });
        await dialog.getByLabel("Parcels delivered").fill(String(i));
        await dialog.getByRole("button", { name: "Complete the task" }).click();
        await dialog.waitFor({ state: "detached" });
        await press("Back");
      }
      await page
        .getByRole("status")
        .filter({ hasText: `${TASKS * 5} waiting` })
        .waitFor();
      t0 = Date.now();
      await context.setOffline(false);
      await page.evaluate(() => window.dispatchEvent(new Event("online")));
      await page.getByRole("status").filter({ hasText: "All sent" }).waitFor({ timeout: 120_000 });
      const seconds = (Date.now() - t0) / 1000;
      // Applied once each, in order: every task's five commands, accepted, in the order made.
      let ok = true;
      for (const task of tasks) {
        const r = must(
          await api(`/task_commands/?task=${encodeURIComponent(task)}&page_size=100`, { token: admin }),
          "commands",
        );
        const mine = r.results
          .filter((c) => c.external_id.startsWith("app-"))
          .sort(
            (a, b) => Date.parse(a.time) - Date.parse(b.time) || a.created_at.localeCompare(b.created_at),
          );
        const actions = mine.map((c) => `${c.action}:${c.state}`).join(",");
        if (
          actions !== "accept:accepted,transit:accepted,activate:accepted,update:accepted,complete:accepted"
        ) {
          log("field app: commands of", task, actions);
          ok = false;
        }
      }
      report.figure("app.offline_sync.seconds_100", seconds, {
        unit: "s",
        target: "<= 5",
        ok,
        label: "field app: 100 offline actions on 20 tasks sent when back online (each once, in order)",
      });
      log("field app: first load", firstLoad, "ms; sync", seconds, "s; applied once in order:", ok);
    } finally {
      await browser.close();
    }
  },
};
