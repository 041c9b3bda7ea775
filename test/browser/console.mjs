#!/usr/bin/env node
// `npm run test:browser` (second part): the dispatch console (contract §26) in Debian's Chromium,
// driven by playwright-core against the README's dev command on its own port. Finds every
// control by its role and English name, as the contract says a screen-reader user would.
// Checks: sign-in as a manager, the seeded board, drag to a worker and to a position (the
// commands exist in the API), a change from a second browser context within 1 s, a keyboard-only
// assign and unassign, optimize → apply (positions written), a worker's "not yours", no console
// error and no request off the origin, axe-core on each screen (no serious or critical
// violation). Screenshots in English and Finnish go to test-output/ (gitignored).
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { axe as axeOf, launch, run, service } from "./harness.mjs";

// BROWSER_TEST_BASE: a dev server already running (all.mjs, or while working on the console).
const svc = service(Number(process.env.CONSOLE_TEST_PORT || 8798), "console");
const { base: BASE, api, log } = svc;
const OUT = "test-output";
const ok = (r, status = [200, 201]) => {
  assert.ok([status].flat().includes(r.status), `${r.status} ${r.text}`);
  return r.body;
};

/** An account with a manager, two workers and a day of tasks in Helsinki's zone. */
async function seed() {
  const stamp = Date.now();
  const email = `console-${stamp}@example.test`;
  const password = "console test password";
  ok(await api("/accounts/", { body: { name: "Console test", email, password } }));
  const admin = ok(await api("/authenticate/", { body: { username: email, password } })).token;
  const me = ok(await api("/users/me/", { token: admin }));
  const accountId = me.account.split("/").filter(Boolean).pop();
  ok(
    await api(`/accounts/${accountId}/`, {
      method: "PATCH",
      token: admin,
      body: { timezone: "Europe/Helsinki" },
    }),
  );
  const user = async (name, role) => {
    const address = `${name.split(" ")[0].toLowerCase()}-${email}`;
    const u = ok(await api("/users/", { token: admin, body: { email: address, name, password, role } }));
    const token = ok(await api("/authenticate/", { body: { username: address, password } })).token;
    return { ...u, email: address, token };
  };
  // A metafield the account requires before completion: the task dialogs ask for it.
  ok(
    await api("/metafields/", {
      token: admin,
      body: {
        key: "parcels",
        label: "Parcels",
        applies_to: "tasks",
        value_type: "integer",
        is_required_before_complete: true,
      },
    }),
  );
  const manager = await user("Maija Manager", "manager");
  const aino = await user("Aino", "worker");
  const bertil = await user("Bertil", "worker");
  const today = new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Helsinki" }).format(new Date());
  const places = [
    ["Aleksanterinkatu 1, Helsinki", 24.95, 60.17],
    ["Mannerheimintie 10, Helsinki", 24.94, 60.169],
    ["Hämeentie 5, Helsinki", 24.96, 60.185],
    ["Itäkatu 3, Helsinki", 25.08, 60.21],
    ["Tapiolantie 2, Espoo", 24.8, 60.176],
    ["Tikkurilantie 7, Vantaa", 25.04, 60.29],
  ];
  const tasks = [];
  for (const [i, [raw, lon, lat]] of places.entries()) {
    const body = {
      account: me.account,
      category: "drop_off",
      address: { raw_address: raw, location: { type: "Point", coordinates: [lon, lat] } },
      contact: { name: `Customer ${i + 1}`, phones: [`+35840000000${i}`] },
      complete_after: `${today}T${String(9 + i).padStart(2, "0")}:00:00`,
      complete_before: `${today}T${String(11 + i).padStart(2, "0")}:00:00`,
      ...(i >= 4 ? { assignee: aino.url, position: i } : {}),
    };
    tasks.push(
      ok(await api("/tasks/", { token: admin, body, headers: { "Accept-Timezone": "Europe/Helsinki" } })),
    );
  }
  return { email, password, admin, me, manager, aino, bertil, tasks, today, password2: password };
}

const axe = (page, screen) => axeOf(page, screen, log);

const commandsOf = async (token, task) =>
  ok(await api(`/task_commands/?task=${encodeURIComponent(task.url)}`, { token })).results;

async function main() {
  await svc.ready();
  const s = await seed();
  const [t1, t2, t3, t4, t5, t6] = s.tasks;
  const name = (t) => t.address.raw_address.split(",")[0];
  const browser = await launch();
  mkdirSync(OUT, { recursive: true });
  const problems = [];
  const watch = (page) => {
    // Failed loads are checked by their response below, with their URL.
    page.on("console", (m) => {
      if (m.type() === "error" && !m.text().startsWith("Failed to load resource"))
        problems.push(`console: ${m.text()}`);
    });
    page.on("response", (r) => {
      const expected = r.status() === 400 && r.request().method() === "POST" && r.url().endsWith("/tasks/");
      if (r.status() >= 400 && !expected) problems.push(`${r.status()} ${r.request().method()} ${r.url()}`);
    });
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("request", (r) => {
      if (
        !r.url().startsWith(BASE) &&
        !r.url().startsWith(BASE.replace("http", "ws")) &&
        !r.url().startsWith("data:")
      )
        problems.push(`off-origin request: ${r.url()}`);
    });
  };
  const viewport = { width: 1400, height: 900 };
  try {
    const ctx = await browser.newContext({ viewport, locale: "en-GB" });
    const page = await ctx.newPage();
    watch(page);
    await page.goto(`${BASE}/console/`);
    await axe(page, "sign-in");
    await page.getByRole("textbox", { name: "Email" }).fill(s.manager.email);
    await page.getByRole("textbox", { name: "Password" }).fill(s.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("status").filter({ hasText: "Live" }).waitFor({ timeout: 10_000 });
    const unassigned = page.getByRole("region", { name: /^Unassigned/ });
    const aino = page.getByRole("region", { name: /^Aino/ });
    const bertil = page.getByRole("region", { name: /^Bertil/ });
    await unassigned.getByRole("listitem", { name: name(t1) }).waitFor();
    assert.equal(await unassigned.getByRole("listitem").count(), 4);
    assert.deepEqual(await aino.getByRole("listitem").evaluateAll((els) => els.map((e) => e.ariaLabel)), [
      name(t5),
      name(t6),
    ]);
    assert.equal(await page.getByRole("textbox", { name: "Date" }).inputValue(), s.today);
    const item = unassigned.getByRole("listitem", { name: name(t1) });
    assert.match(await item.textContent(), /Unassigned.*09:00.11:00.*Customer 1/);
    await page.getByRole("region", { name: "Map" }).waitFor();
    assert.equal(await page.locator(".map circle").count(), 6);
    await axe(page, "board");
    await page.screenshot({ path: `${OUT}/console-board-en.png` });

    // Drag to a worker (end of the route), then between two items (that position).
    await item.dragTo(bertil.getByRole("list"));
    await bertil.getByRole("listitem", { name: name(t1) }).waitFor();
    await page.getByRole("status").filter({ hasText: "Moved." }).waitFor();
    const c1 = await commandsOf(s.admin, t1);
    assert.deepEqual(
      c1.map((c) => [c.action, c.state]),
      [
        ["assign", "accepted"],
        ["update", "accepted"],
      ],
    );
    assert.ok(c1.every((c) => c.external_id.startsWith("console-")));
    await unassigned
      .getByRole("listitem", { name: name(t2) })
      .dragTo(aino.getByRole("listitem", { name: name(t6) }));
    await page.waitForFunction(
      (names) => {
        const r = [...document.querySelectorAll("section")].find((x) =>
          x.querySelector("h2")?.textContent?.startsWith("Aino"),
        );
        return (
          JSON.stringify([...r.querySelectorAll("li")].map((li) => li.ariaLabel)) === JSON.stringify(names)
        );
      },
      [name(t5), name(t2), name(t6)],
    );
    // The board moves at once; its batch of commands follows (paced under the token's rate
    // limit, web/shared/pace.ts), so the API is read until it has it, as for the keyboard below.
    let t2now = ok(await api(`/tasks/${t2.id}/`, { token: s.admin }));
    for (let i = 0; i < 50 && t2now.assignee !== s.aino.url; i++) {
      await page.waitForTimeout(100);
      t2now = ok(await api(`/tasks/${t2.id}/`, { token: s.admin }));
    }
    assert.equal(t2now.assignee, s.aino.url);
    assert.ok(t2now.position > 4 && t2now.position < 5, `position between: ${t2now.position}`);
    log("drag: assign to a worker and to a position, commands in the API");

    // A second browser context (another dispatcher) moves a task; the first shows it within 1 s.
    const other = await browser.newContext({ viewport, locale: "en-GB" });
    const page2 = await other.newPage();
    watch(page2);
    await page2.goto(`${BASE}/console/?lang=en`);
    await page2.getByRole("textbox", { name: "Email" }).fill(s.email);
    await page2.getByRole("textbox", { name: "Password" }).fill(s.password);
    await page2.getByRole("button", { name: "Sign in" }).click();
    await page2.getByRole("status").filter({ hasText: "Live" }).waitFor({ timeout: 10_000 });
    await page2
      .getByRole("region", { name: /^Unassigned/ })
      .getByRole("listitem", { name: name(t3) })
      .dragTo(page2.getByRole("region", { name: /^Bertil/ }).getByRole("list"));
    await page2.getByRole("status").filter({ hasText: "Moved." }).waitFor();
    const t0 = Date.now();
    await bertil.getByRole("listitem", { name: name(t3) }).waitFor({ timeout: 5_000 });
    const delay = Date.now() - t0;
    assert.ok(delay < 1000, `another dispatcher's move showed after ${delay} ms`);
    // A phone (the worker's own command) shows too.
    ok(
      await api("/task_commands/", {
        token: s.aino.token,
        body: {
          task: t5.url,
          action: "accept",
          external_id: `phone-${Date.now()}`,
          time: new Date().toISOString(),
        },
      }),
    );
    await aino
      .getByRole("listitem", { name: name(t5) })
      .filter({ hasText: "Accepted" })
      .waitFor({ timeout: 2_000 });
    log(`live: another context's move in ${delay} ms; a phone's accept shown`);

    // Reconnect with ?after=: drop the socket, change a task meanwhile, nothing lost or doubled.
    await page.evaluate(() => window.__consoleStream.drop());
    await page.getByRole("status").filter({ hasText: "Reconnecting" }).waitFor({ timeout: 2_000 });
    ok(
      await api("/task_commands/", {
        token: s.admin,
        body: {
          task: t4.url,
          action: "assign",
          assignee: s.bertil.url,
          external_id: `gap-${Date.now()}`,
          time: new Date().toISOString(),
        },
      }),
    );
    await page.getByRole("status").filter({ hasText: "Live" }).waitFor({ timeout: 10_000 });
    await bertil.getByRole("listitem", { name: name(t4) }).waitFor({ timeout: 3_000 });
    assert.equal(await page.getByRole("listitem", { name: name(t4) }).count(), 1);
    log("reconnect: the change made while away arrived once");

    // Keyboard only: focus an item, `a` opens "Assign", choose a worker and a position; then unassign.
    await page.getByRole("listitem", { name: name(t3) }).focus();
    await page.keyboard.press("a");
    const dialog = page.getByRole("dialog", { name: "Assign" });
    await dialog.waitFor();
    await axe(page, "assign dialog");
    const workerBox = dialog.getByRole("combobox", { name: "Worker" });
    await workerBox.focus();
    // Aino is first by name: Home selects her (pressed again if the list was not yet ready).
    for (let i = 0; i < 5 && (await workerBox.inputValue()) !== s.aino.url; i++) {
      await page.keyboard.press("Home");
      await page.waitForTimeout(50);
    }
    assert.equal(await workerBox.inputValue(), s.aino.url);
    await dialog.getByRole("spinbutton", { name: "Position" }).fill("1");
    await dialog.getByRole("spinbutton", { name: "Position" }).press("Enter");
    await page.waitForFunction(
      (n) =>
        document.querySelector("section[aria-labelledby] li")?.ariaLabel &&
        [...document.querySelectorAll("section")]
          .find((x) => x.querySelector("h2")?.textContent?.startsWith("Aino"))
          ?.querySelector("li")?.ariaLabel === n,
      name(t3),
    );
    let kb = await commandsOf(s.admin, t3);
    for (let i = 0; i < 50 && kb.at(-1)?.action !== "reassign"; i++) {
      await page.waitForTimeout(100);
      kb = await commandsOf(s.admin, t3);
    }
    assert.deepEqual(kb.at(-1).action, "reassign");
    await page.getByRole("listitem", { name: name(t3) }).focus();
    await page.keyboard.press("u");
    await unassigned.getByRole("listitem", { name: name(t3) }).waitFor();
    // The board moves at once; the command reaches the API a moment later.
    let lastAction = "";
    for (let i = 0; i < 50 && lastAction !== "unassign"; i++) {
      lastAction = (await commandsOf(s.admin, t3)).at(-1).action;
      if (lastAction !== "unassign") await page.waitForTimeout(100);
    }
    assert.equal(lastAction, "unassign");
    log("keyboard: assign with position and unassign");

    // A refused move is rolled back with the API's message.
    await page.getByRole("listitem", { name: name(t5) }).focus();
    ok(
      await api(`/task_commands/`, {
        token: s.admin,
        body: {
          task: t5.url,
          action: "cancel",
          external_id: `x-${Date.now()}`,
          time: new Date().toISOString(),
        },
      }),
    );
    await aino
      .getByRole("listitem", { name: name(t5) })
      .filter({ hasText: "Cancelled" })
      .waitFor({ timeout: 2_000 });
    await page.keyboard.press("u");
    await page
      .getByRole("status")
      .filter({ hasText: /refused.*cancelled/i })
      .waitFor();
    await aino.getByRole("listitem", { name: name(t5) }).waitFor();
    log("refused: rolled back with the API's message");

    // The running day (contract §30): duty in each worker's region, on-duty workers as named
    // buttons on the map moved by their positions, ETA and "Late" on items, a status "N late".
    const roles = ok(await api("/account_roles/?page_size=500", { token: s.admin })).results;
    const ainoRole = roles.find((r) => r.user === s.aino.url);
    await bertil.getByText("Off duty").waitFor();
    ok(
      await api(`/account_roles/${ainoRole.id}/`, {
        method: "PATCH",
        token: s.aino.token,
        body: { on_duty: true },
      }),
    );
    await aino.getByText("On duty").waitFor({ timeout: 2_000 });
    const fix = (lon, lat, ms = Date.now()) => ({
      location: { type: "Point", coordinates: [lon, lat] },
      time: new Date(ms).toISOString(),
      accuracy_m: 6,
    });
    ok(await api("/positions/", { token: s.aino.token, body: fix(24.93, 60.172) }), 202);
    const map = page.getByRole("region", { name: "Map" });
    const pin = map.getByRole("button", { name: "Aino" });
    await pin.waitFor({ timeout: 2_000 });
    const placeOf = () => pin.evaluate((el) => el.style.transform);
    const before = await placeOf();
    // Five seconds on (the stream sends a worker's position at most every 5 s): the next one.
    await page.waitForTimeout(5_200);
    const posted = Date.now();
    ok(await api("/positions/", { token: s.aino.token, body: fix(25.02, 60.205) }), 202);
    await page.waitForFunction((b) => document.querySelector(".worker-pin")?.style.transform !== b, before, {
      timeout: 2_000,
    });
    const moved = Date.now() - posted;
    assert.ok(moved < 1000, `the marker moved ${moved} ms after the position's 202`);
    await pin.click();
    assert.equal(
      await page.evaluate(() => document.activeElement?.id),
      `region-${s.aino.url.replace(/\W+/g, "-")}`,
    );
    // ETAs on Aino's open items (the list read again after the position).
    await aino
      .getByRole("listitem")
      // An ETA past midnight carries its date ("ETA Tue 1 Dec, 00:05").
      .filter({ hasText: /ETA (\w{3},? [\w ]+, )?\d\d:\d\d/ })
      .first()
      .waitFor({ timeout: 15_000 });
    // Far away: every open stop of Aino's is late.
    await page.waitForTimeout(5_200);
    ok(await api("/positions/", { token: s.aino.token, body: fix(24.9, 55.0) }), 202);
    await aino
      .getByRole("listitem", { name: name(t6) })
      .filter({ hasText: "Late" })
      .waitFor({ timeout: 15_000 });
    // An ETA that falls on another day than the board's shows that day's date, not a time alone
    // that would read as today's.
    const late6 = ok(await api(`/tasks/${t6.id}/`, { token: s.admin }));
    const etaDay = new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Helsinki" }).format(
      new Date(late6.eta),
    );
    const etaText = await aino
      .getByRole("listitem", { name: name(t6) })
      .locator(".eta")
      .textContent();
    // en-GB "Tue 1 Dec, 06:04", en-US "Tue, Dec 1, 06:04 AM".
    const dated = /^ETA \w{3},? (\d{1,2} \w{3}|\w{3} \d{1,2}), \d\d:\d\d/;
    if (etaDay === s.today) assert.match(etaText, /^ETA \d\d:\d\d/, "today's ETA: the time alone");
    else assert.match(etaText, dated, `an ETA on ${etaDay} (board ${s.today}): its date`);
    const lateShown = await page.locator(".late-badge").count();
    await page
      .getByRole("status")
      .filter({ hasText: new RegExp(`^${lateShown} late$`) })
      .waitFor({ timeout: 15_000 });
    await axe(page, "board with positions");
    await page.screenshot({ path: `${OUT}/console-running-day-en-1400.png` });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: `${OUT}/console-running-day-en-1280.png` });
    await page.setViewportSize({ width: 1920, height: 1080 });
    await page.screenshot({ path: `${OUT}/console-running-day-en-1920.png` });
    await page.setViewportSize(viewport);
    log(
      `running day: duty shown, the marker moved ${moved} ms after its position, ETA and ${lateShown} late`,
    );

    // Auto-assign (contract §30): the shown day's Unassigned placed by §29's insertion, each
    // result said (the worker it went to, or why it fits nowhere).
    const waiting = await unassigned.getByRole("listitem").count();
    await page.getByRole("button", { name: "Auto-assign" }).click();
    const aa = page.getByRole("dialog", { name: /Auto-assign/ });
    await aa.waitFor();
    if (waiting) {
      await aa.getByRole("listitem").first().waitFor({ timeout: 10_000 });
      const lines = await aa.getByRole("listitem").allTextContents();
      assert.equal(lines.length, waiting);
      for (const line of lines)
        assert.match(line, /Assigned to \S|No location|capacity|time window|any shift/, line);
    } else await aa.getByText("No unassigned task on this day.").waitFor();
    await axe(page, "auto-assign dialog");
    await page.screenshot({ path: `${OUT}/console-auto-assign-en.png` });
    await aa.getByRole("button", { name: "Close" }).click();
    log(`auto-assign: ${waiting} unassigned, each with its result`);

    // New task: the API's field errors at their fields, then a created task on the board.
    await page.getByRole("button", { name: "New task" }).click();
    const nt = page.getByRole("dialog", { name: "New task" });
    await nt.waitFor();
    await axe(page, "new task dialog");
    await nt.getByRole("button", { name: "Create" }).click();
    await nt.locator("#f-address-err").waitFor();
    assert.equal(await nt.getByRole("textbox", { name: "Address" }).getAttribute("aria-invalid"), "true");
    await nt.getByRole("textbox", { name: "Address" }).fill("Helsinki");
    await nt.getByRole("textbox", { name: "Contact name" }).fill("New Customer");
    await nt.getByRole("spinbutton", { name: "Parcels" }).fill("3");
    await nt.getByRole("combobox", { name: "Category" }).selectOption("pick_up");
    await nt.getByRole("button", { name: "Create" }).click();
    await unassigned.getByRole("listitem", { name: "Helsinki" }).waitFor();
    const created = ok(await api("/tasks/?ordering=-created_at&page_size=1", { token: s.admin })).results[0];
    assert.deepEqual(
      [created.address.raw_address, created.metafields.parcels, created.category],
      ["Helsinki", 3, "pick_up"],
    );
    log("new task: field errors shown, task created with the required metafield");

    // Edit: `e` on a focused item, a new contact name, saved through PATCH.
    await page.getByRole("listitem", { name: "Helsinki" }).focus();
    await page.keyboard.press("e");
    const et = page.getByRole("dialog", { name: "Edit task" });
    await et.waitFor();
    await axe(page, "edit task dialog");
    assert.equal(await et.getByRole("spinbutton", { name: "Parcels" }).inputValue(), "3");
    // The task's own values, a list's included (a select keeps its category, not the first option).
    assert.equal(await et.getByRole("combobox", { name: "Category" }).inputValue(), "pick_up");
    await et.getByRole("textbox", { name: "Contact name" }).fill("Renamed Customer");
    await et.getByRole("button", { name: "Save" }).click();
    await page.getByRole("listitem", { name: "Helsinki" }).filter({ hasText: "Renamed Customer" }).waitFor();
    const edited = ok(await api(`/tasks/${created.id}/`, { token: s.admin }));
    assert.deepEqual([edited.contact.name, edited.category], ["Renamed Customer", "pick_up"]);
    log("edit task: saved");

    // Optimize on today's date → from now (contract §30), each worker's route before and after,
    // then apply: positions written. The day's shift and the open tasks' windows are widened to
    // the whole day first, so that something is left to plan from now at any hour of the run.
    const accountPath = new URL(s.me.account).pathname;
    ok(
      await api(accountPath, {
        method: "PATCH",
        token: s.admin,
        body: { optimize_earliest_start: "00:00:00", optimize_latest_end: "23:59:59" },
      }),
    );
    for (const x of ok(await api("/tasks/?page_size=100", { token: s.admin })).results) {
      if (["completed", "failed", "cancelled"].includes(x.state)) continue;
      ok(
        await api(`/tasks/${x.id}/`, {
          method: "PATCH",
          token: s.admin,
          body: { complete_after: `${s.today}T00:00:00`, complete_before: `${s.today}T23:59:00` },
          headers: { "Accept-Timezone": "Europe/Helsinki" },
        }),
      );
    }
    await page.getByRole("button", { name: "Optimize" }).click();
    const od = page.getByRole("dialog", { name: "Optimize the day" });
    await od.getByRole("button", { name: "Apply" }).waitFor({ timeout: 60_000 });
    await axe(page, "optimize dialog");
    await page.screenshot({ path: `${OUT}/console-optimize-en.png` });
    const proposed = ok(await api("/route_optimizations/?page_size=1", { token: s.admin })).results[0];
    assert.equal(proposed.from_now, true, "today's optimization plans from now");
    const dayRoutes = ok(await api(`/routes/?date=${s.today}&page_size=100`, { token: s.admin })).results;
    let rows = 0;
    for (const w of [s.aino, s.bertil]) {
      const route = dayRoutes.find((r) => r.assignee === w.url && proposed.routes.includes(r.url));
      if (!route) continue;
      const before = proposed.result.before.routes.find((r) => r.route === route.url);
      const after = proposed.result.routes.find((r) => r.route === route.url);
      const cells = await od
        .getByRole("row", { name: new RegExp(`^${w.name}\\b`) })
        .getByRole("cell")
        .allTextContents();
      assert.equal(cells.length, 6, JSON.stringify(cells));
      // Stops, distance and time, before and after: the service's figures, never "–".
      assert.deepEqual(cells.slice(0, 2), [String(before.tasks.length), String(after?.stops.length ?? 0)]);
      for (const c of cells.slice(2, 4)) assert.match(c, /^[\d.,\s]+ km$/);
      for (const c of cells.slice(4)) assert.match(c, /^\d+ h \d\d min$/);
      rows++;
    }
    assert.ok(rows > 0, "a row per worker of the proposal");
    const total = await od
      .getByRole("row", { name: /^All workers/ })
      .getByRole("cell")
      .allTextContents();
    assert.ok(total.length === 6 && !total.join(" ").includes("–"), JSON.stringify(total));
    await od.getByRole("button", { name: "Apply" }).click();
    await page.getByRole("status").filter({ hasText: "applied" }).waitFor({ timeout: 30_000 });
    const routed = ok(
      await api(`/tasks/?assignee=${encodeURIComponent(s.bertil.url)}&ordering=position`, { token: s.admin }),
    ).results;
    // What the plan left out (late in the evening, from now, a task may no longer fit in the
    // shift) keeps its assignee and gets no place; every task the plan placed has its route.
    const left = new Set(proposed.result.unassigned.map((u) => u.task));
    const placed = routed.filter((t) => !left.has(t.url));
    assert.ok(
      placed.length > 0 && placed.every((t) => t.route && Number.isInteger(t.position)),
      JSON.stringify(routed.map((t) => [t.route, t.position, left.has(t.url)])),
    );
    log(
      `optimize: from now, ${rows} workers' routes before and after, applied, routes and positions written`,
    );

    // Finnish: the same board in another language.
    const fi = await browser.newContext({ viewport, locale: "fi-FI" });
    const pageFi = await fi.newPage();
    watch(pageFi);
    await pageFi.goto(`${BASE}/console/`);
    assert.equal(await pageFi.locator("html").getAttribute("lang"), "fi");
    await pageFi.locator("input[type=email]").fill(s.manager.email);
    await pageFi.locator("input[type=password]").fill(s.password);
    await pageFi.locator("button[type=submit]").click();
    await pageFi.locator(".live.live").waitFor({ timeout: 10_000 });
    await pageFi.locator("li.task").first().waitFor();
    await pageFi.locator(".worker-pin").first().waitFor();
    await axe(pageFi, "board (fi)");
    await pageFi.screenshot({ path: `${OUT}/console-board-fi.png` });
    await pageFi.setViewportSize({ width: 1920, height: 1080 });
    await pageFi.screenshot({ path: `${OUT}/console-running-day-fi-1920.png` });
    await pageFi.setViewportSize({ width: 1280, height: 800 });
    await pageFi.screenshot({ path: `${OUT}/console-running-day-fi-1280.png` });

    // Sign out revokes the token; a worker is told the console is not theirs.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    const ainoSessions = async () => ok(await api("/session_tokens/", { token: s.aino.token })).results;
    const sessionsBefore = (await ainoSessions()).length;
    await page.getByRole("textbox", { name: "Email" }).fill(s.aino.email);
    await page.getByRole("textbox", { name: "Password" }).fill(s.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "This console is for dispatchers" }).waitFor();
    assert.equal(await page.getByRole("region").count(), 0);
    // Told and signed out at once (issue 52 item 4): no token kept, the one used is revoked.
    assert.equal(
      await page.getByRole("link", { name: `${BASE}/app/` }).getAttribute("href"),
      "/app/",
      "the field app, as a link",
    );
    const kept = await page.evaluate(() => Object.values(sessionStorage));
    assert.deepEqual(kept, [], "a worker's token kept in sessionStorage");
    assert.equal((await ainoSessions()).length, sessionsBefore, "the worker's console session is still live");
    await axe(page, "not yours");
    await page.screenshot({ path: `${OUT}/console-not-yours-en.png` });
    log("sign-out, and a worker's 'not yours'");
    assert.deepEqual(problems, [], "no console error, no request off the origin");
    log("ok; screenshots in test-output/");
  } finally {
    await browser.close();
  }
}

run(main, svc);
