#!/usr/bin/env node
import assert from "node:assert/strict";
// `npm run test:browser` (part): the field app (contract §27) in Debian's Chromium, at 360×640.
// Starts the service with the README's dev command on its own port (or uses BROWSER_TEST_BASE),
// makes an account, a worker and six of today's tasks through the API, signs the worker in,
// then, offline (`context.setOffline`): completes three tasks (one with a signature and a photo,
// two with a form asked before "Complete": one given by `form_default_values`, one a
// dispatcher's draft response), fails one with a reason, starts one the dispatcher cancels
// meanwhile; back online with the page left open, waits for "All sent" (no reload: issue 52
// item 6); then one "Accept" offline and back online, as the issue tried it; then kills the page
// mid-sync and opens it again. Checks through the API that every action was applied once
// and in order, the signature and the photo attached, and that the refused action is shown with
// its reason. axe-core on every screen; screenshots to test-output/field-*.png.
import { mkdirSync } from "node:fs";
import { axe, launch, run, service } from "./harness.mjs";

const svc = service(Number(process.env.FIELD_TEST_PORT || 8798), "field");
const { base: BASE, api, log } = svc;
const OUT = "test-output";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A tiny PNG (a photo from the "camera"). */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==",
  "base64",
);

async function main() {
  await svc.ready();
  mkdirSync(OUT, { recursive: true });
  const stamp = Date.now();
  const email = `field-${stamp}@example.test`;
  const password = "field test password";
  assert.equal((await api("/accounts/", { body: { name: "Field test", email, password } })).status, 201);
  const admin = (await api("/authenticate/", { body: { username: email, password } })).body.token;
  const me = (await api("/users/me/", { token: admin })).body;
  const accountId = me.account.split("/").at(-2);
  const patched = await api(`/accounts/${accountId}/`, {
    method: "PATCH",
    token: admin,
    body: { failed_reasons: ["Nobody home", "Address not found"] },
  });
  assert.equal(patched.status, 200, patched.text);
  const workerEmail = `w-${email}`;
  const worker = await api("/users/", {
    token: admin,
    body: { email: workerEmail, name: "Aino", password, role: "worker" },
  });
  assert.equal(worker.status, 201, worker.text);
  // A form the dispatcher gives tasks (contract §15): asked before "Complete" (contract §27).
  const form = await api("/forms/", { token: admin, body: { name: "Delivery check", description: "" } });
  assert.equal(form.status, 201, form.text);
  const fields = [
    { key: "goods", label: "Goods", field_type: "section" },
    {
      key: "condition",
      label: "Condition",
      field_type: "select",
      choices: ["Intact", "Damaged"],
      required: true,
    },
    { key: "count", label: "Parcels", field_type: "number", default: 1 },
    { key: "note", label: "Note", field_type: "textarea" },
    { key: "door_photo", label: "Photo of the door", field_type: "photo" },
    { key: "internal", label: "Internal code", field_type: "text", default: "K-7", visible_to_worker: false },
  ];
  for (const [i, f] of fields.entries()) {
    const r = await api("/form_fields/", { token: admin, body: { form: form.body.url, position: i, ...f } });
    assert.equal(r.status, 201, r.text);
  }
  const formDefaults = { [form.body.id]: { count: 3 } };
  const today = new Date().toISOString().slice(0, 10);
  const streets = [
    "Kauppakatu 1",
    "Rantatie 2",
    "Koulukatu 3",
    "Puistotie 4",
    "Satamakatu 5",
    "Tehdaskatu 6",
  ];
  const tasks = [];
  for (const [i, street] of streets.entries()) {
    const r = await api("/tasks/", {
      token: admin,
      body: {
        account: me.account,
        category: "drop_off",
        address: { raw_address: `${street}, Tampere, Finland` },
        contact: { name: `Customer ${i + 1}`, phones: ["+358401234567"] },
        complete_after: `${today}T00:00:00Z`,
        complete_before: `${today}T23:59:00Z`,
        description: `Parcel ${i + 1}`,
        assignee: worker.body.url,
        ...(i === 1 ? { form_default_values: formDefaults } : {}),
      },
    });
    assert.equal(r.status, 201, r.text);
    tasks.push(r.body);
  }
  // The third task's form: a draft response the dispatcher started.
  const draft = await api("/form_responses/", {
    token: admin,
    body: { form: form.body.url, task: tasks[2].url, data: { condition: "Damaged" } },
  });
  assert.equal(draft.status, 201, draft.text);
  // Route order: positions as a dispatcher's reordering would set them (the last first).
  for (const [i, t] of tasks.entries()) {
    const r = await api("/task_commands/", {
      token: admin,
      body: {
        task: t.url,
        external_id: `pos-${stamp}-${i}`,
        time: new Date().toISOString(),
        action: "update",
        task_data: { position: tasks.length - i },
      },
    });
    assert.equal(r.status, 201, r.text);
  }
  const byStreet = Object.fromEntries(tasks.map((t, i) => [streets[i], t]));

  const browser = await launch();
  const context = await browser.newContext({
    viewport: { width: 360, height: 640 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    locale: "en-GB",
  });
  // The app never sends a request off the service's origin (contract Part four).
  const foreign = [];
  context.on("request", (req) => {
    if (!req.url().startsWith(BASE) && !req.url().startsWith("data:")) foreign.push(req.url());
  });
  // The app paces its requests under the token's rate limit (contract §10, web/shared/pace.ts):
  // a refresh's burst of reads never leaves the worker's commands to a 429 and a later retry.
  // A page's API requests (those with a token): when each was sent, per page, as the server
  // counts them per token (each page here signs in with its own session or shares one in turn).
  const throttled = [];
  const sent = new Map();
  context.on("response", (res) => {
    if (res.status() === 429) throttled.push(`${res.request().method()} ${res.url()}`);
  });
  context.on("request", (req) => {
    if (!req.headers().authorization) return;
    let page = null;
    try {
      page = req.frame().page();
    } catch {
      return; // the service worker's own requests
    }
    if (!sent.has(page)) sent.set(page, []);
    sent.get(page).push(Date.now());
  });
  try {
    let page = await context.newPage();
    await page.goto(`${BASE}/app/?lang=en`);
    await page.getByRole("textbox", { name: "Email" }).waitFor();
    await axe(page, "sign-in");
    await page.screenshot({ path: `${OUT}/field-signin.png` });
    await page.getByRole("textbox", { name: "Email" }).fill(workerEmail);
    await page.getByRole("textbox", { name: "Password" }).fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    const list = page.getByRole("list", { name: "Today" });
    await list.waitFor();
    const names = await list
      .getByRole("listitem")
      .evaluateAll((els) => els.map((e) => e.getAttribute("aria-label")));
    assert.deepEqual(names, [...streets].reverse(), "today's tasks in route order");
    await page.getByRole("status").filter({ hasText: "All sent" }).waitFor();
    await axe(page, "today");
    await page.screenshot({ path: `${OUT}/field-today.png` });
    // The app's files are kept by its service worker before the network goes.
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));

    await context.setOffline(true);
    const open = async (street) => {
      await page.getByRole("listitem", { name: street }).getByRole("link").click();
      await page.getByRole("heading", { name: street }).waitFor();
    };
    const press = (name) => page.getByRole("button", { name, exact: true }).click();
    const back = () => press("Back");

    // 1. With a signature and a photo.
    await open("Kauppakatu 1");
    await axe(page, "task");
    await page.screenshot({ path: `${OUT}/field-task.png` });
    assert.equal(
      await page.getByRole("link", { name: "+358401234567" }).getAttribute("href"),
      "tel:+358401234567",
    );
    assert.match(await page.getByRole("link", { name: "Open in maps" }).getAttribute("href"), /^geo:/);
    // Keyboard users: the page's heading has the focus, and after an action the next step's button.
    assert.equal(await page.evaluate(() => document.activeElement?.tagName), "H1");
    await press("Accept");
    await page.waitForFunction(() => document.activeElement?.textContent === "Start");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.activeElement?.textContent === "Arrived");
    await press("Arrived");
    await press("Complete");
    const dialog = page.getByRole("dialog", { name: "Proof of delivery" });
    await dialog.waitFor();
    const pad = dialog.getByRole("img", { name: "Signature" });
    const box = await pad.boundingBox();
    await page.mouse.move(box.x + 20, box.y + 40);
    await page.mouse.down();
    for (let i = 1; i <= 10; i++) await page.mouse.move(box.x + 20 + i * 25, box.y + 40 + (i % 2) * 30);
    await page.mouse.up();
    await dialog.getByLabel("Photo").setInputFiles({ name: "door.png", mimeType: "image/png", buffer: PNG });
    await axe(page, "proof of delivery");
    await page.screenshot({ path: `${OUT}/field-pod.png` });
    await dialog.getByRole("button", { name: "Complete the task" }).click();
    await dialog.waitFor({ state: "detached" });
    await back();
    // 2: its form, from the task's form defaults, a required choice, a photo field.
    await open("Rantatie 2");
    await press("Start");
    await press("Complete");
    const withForm = page.getByRole("dialog", { name: "Proof of delivery" });
    const check = withForm.getByRole("group", { name: "Delivery check" });
    assert.equal(await check.getByRole("spinbutton", { name: "Parcels" }).inputValue(), "3");
    assert.equal(await check.getByText("Internal code").count(), 0, "a field hidden from workers");
    await withForm.getByRole("button", { name: "Complete the task" }).click();
    // A required field left empty: the browser keeps the dialog open.
    await sleep(300);
    assert.equal(await withForm.isVisible(), true, "not completed with a required field empty");
    await check.getByRole("combobox", { name: "Condition" }).selectOption("Intact");
    await check.getByRole("textbox", { name: "Note" }).fill("Left with the neighbour");
    await check.getByLabel("Photo of the door").setInputFiles({
      name: "door2.png",
      mimeType: "image/png",
      buffer: PNG,
    });
    await axe(page, "form");
    await withForm.evaluate((d) => d.scrollTo(0, 0));
    await page.screenshot({ path: `${OUT}/field-form.png` });
    await withForm.evaluate((d) => d.scrollTo(0, d.scrollHeight));
    await page.screenshot({ path: `${OUT}/field-form-end.png` });
    await withForm.getByRole("button", { name: "Complete the task" }).click();
    await withForm.waitFor({ state: "detached" });
    await back();
    // 3: the dispatcher's draft, its values shown.
    await open("Koulukatu 3");
    await press("Start");
    await press("Complete");
    const drafted = page.getByRole("dialog", { name: "Proof of delivery" });
    assert.equal(await drafted.getByRole("combobox", { name: "Condition" }).inputValue(), "Damaged");
    await drafted.getByRole("button", { name: "Complete the task" }).click();
    await drafted.waitFor({ state: "detached" });
    await back();
    // 4: failed with a reason.
    await open("Puistotie 4");
    await press("Fail");
    const fail = page.getByRole("dialog", { name: "Fail" });
    await fail.getByLabel("Reason").selectOption("Nobody home");
    await axe(page, "fail");
    await fail.getByRole("button", { name: "Fail the task" }).click();
    await back();
    // 5: started on the phone while the dispatcher cancels it.
    await open("Satamakatu 5");
    await press("Start");
    await back();
    const cancel = await api("/task_commands/", {
      token: admin,
      body: {
        task: byStreet["Satamakatu 5"].url,
        external_id: `cancel-${stamp}`,
        time: new Date().toISOString(),
        action: "cancel",
      },
    });
    assert.equal(cancel.status, 201, cancel.text);
    // 4 + 2 + 2 + 1 + 1 actions made offline, none sent.
    await page.getByRole("status").filter({ hasText: "10 waiting" }).waitFor();
    await page.screenshot({ path: `${OUT}/field-offline.png` });
    // An offline reload starts from the phone's copy.
    const reloadStart = Date.now();
    await page.reload();
    await page.getByRole("list", { name: "Today" }).waitFor();
    log("offline reload to a usable Today:", Date.now() - reloadStart, "ms");
    await page.getByRole("status").filter({ hasText: "10 waiting" }).waitFor();

    // A dispatcher's console, open meanwhile, sees the phone's changes arrive live (contract §26).
    const desk = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
    const board = await desk.newPage();
    await board.goto(`${BASE}/console/?lang=en`);
    await board.getByRole("textbox", { name: "Email" }).fill(email);
    await board.getByRole("textbox", { name: "Password" }).fill(password);
    await board.getByRole("button", { name: "Sign in" }).click();
    const onBoard = board
      .getByRole("region", { name: "Aino" })
      .getByRole("listitem", { name: "Kauppakatu 1", exact: true });
    await onBoard.waitFor();
    await board.getByRole("status").filter({ hasText: "Live" }).waitFor();
    assert.match(await onBoard.textContent(), /Assigned/, "the console before the phone syncs");

    // Online with the page left open, as a worker would: the queue goes without a reload
    // (issue 52 item 6), within a few seconds.
    const goneOnline = Date.now();
    await context.setOffline(false);
    await page.getByRole("status").filter({ hasText: "All sent" }).waitFor({ timeout: 15_000 });
    log("back online to All sent, page left open:", Date.now() - goneOnline, "ms");
    await board.waitForFunction(
      (id) => /Completed/.test(document.querySelector(`[data-id="${id}"]`)?.textContent ?? ""),
      byStreet["Kauppakatu 1"].id,
      { timeout: 5_000 },
    );
    log("the console shows the phone's completion live, without a reload");
    await desk.close();

    // The issue's own steps: offline, one "Accept", "1 waiting · Offline"; back online, the page
    // left open, it goes (before the fix it waited for a reload).
    await context.setOffline(true);
    await open("Tehdaskatu 6");
    await press("Accept");
    await page.getByRole("status").filter({ hasText: "1 waiting · Offline" }).waitFor();
    await context.setOffline(false);
    await page.getByRole("status").filter({ hasText: "All sent" }).waitFor({ timeout: 15_000 });
    // Killed mid-sync and opened again: it resumes, and nothing is applied twice.
    await context.setOffline(true);
    await press("Start");
    await press("Arrived");
    await page.getByRole("status").filter({ hasText: "2 waiting" }).waitFor();
    await context.setOffline(false);
    await sleep(150);
    await page.close();
    page = await context.newPage();
    await page.goto(`${BASE}/app/?lang=en`);
    await page.getByRole("status").filter({ hasText: "All sent" }).waitFor({ timeout: 15_000 });

    // Through the API: each action once, in order; the proof attached; the refusal shown.
    const commandsOf = async (t) => {
      const r = await api(`/task_commands/?task=${encodeURIComponent(t.url)}&page_size=100`, {
        token: admin,
      });
      assert.equal(r.status, 200, r.text);
      return r.body.results
        .filter((c) => c.external_id.startsWith("app-"))
        .sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
    };
    const expect = {
      "Kauppakatu 1": ["accept", "transit", "activate", "complete"],
      "Rantatie 2": ["transit", "complete"],
      "Koulukatu 3": ["transit", "complete"],
      "Puistotie 4": ["fail"],
      "Satamakatu 5": ["transit"],
      "Tehdaskatu 6": ["accept", "transit", "activate"],
    };
    for (const [street, actions] of Object.entries(expect)) {
      const got = await commandsOf(byStreet[street]);
      assert.deepEqual(
        got.map((c) => c.action),
        actions,
        `${street}: each action once, in order`,
      );
      assert.equal(new Set(got.map((c) => c.external_id)).size, got.length);
    }
    const state = async (street) =>
      (await api(`/tasks/${byStreet[street].id}/`, { token: admin })).body.state;
    for (const street of ["Kauppakatu 1", "Rantatie 2", "Koulukatu 3"])
      assert.equal(
        await state(street),
        "completed",
        `${street}: ${JSON.stringify((await commandsOf(byStreet[street])).map((c) => [c.action, c.state, c.error_message]))}`,
      );
    assert.equal(await state("Puistotie 4"), "failed");
    assert.equal(await state("Satamakatu 5"), "cancelled");
    assert.equal(await state("Tehdaskatu 6"), "active");
    const [refused] = await commandsOf(byStreet["Satamakatu 5"]);
    assert.equal(refused.state, "rejected");
    const failed = await commandsOf(byStreet["Puistotie 4"]);
    assert.equal(failed[0].notes, "Nobody home");
    const first = byStreet["Kauppakatu 1"];
    const sigs = await api(`/signatures/?task=${encodeURIComponent(first.url)}`, { token: admin });
    assert.equal(sigs.body.results.length, 1, "the signature, once");
    const docs = await api(`/documents/?task=${encodeURIComponent(first.url)}`, { token: admin });
    assert.equal(docs.body.results.length, 1, "the photo, once");
    assert.equal(docs.body.results[0].mimetype, "image/png");

    // The forms: one completed response per task, by the worker, before the task's completion.
    const responsesOf = async (street) => {
      const r = await api(`/form_responses/?task=${encodeURIComponent(byStreet[street].url)}`, {
        token: admin,
      });
      assert.equal(r.status, 200, r.text);
      return r.body.results;
    };
    const [filled] = await responsesOf("Rantatie 2");
    assert.equal((await responsesOf("Rantatie 2")).length, 1, "one response, once");
    assert.equal(filled.state, "completed");
    assert.equal(filled.completed_by, worker.body.url);
    const photo = await api(`/documents/?task=${encodeURIComponent(byStreet["Rantatie 2"].url)}`, {
      token: admin,
    });
    assert.equal(photo.body.results.length, 1, "the form's photo, once");
    assert.deepEqual(filled.data, {
      condition: "Intact",
      count: 3,
      note: "Left with the neighbour",
      door_photo: photo.body.results[0].url,
      internal: "K-7",
    });
    const completedAt = Date.parse(filled.completed_at);
    const [completeCommand] = (await commandsOf(byStreet["Rantatie 2"])).filter(
      (c) => c.action === "complete",
    );
    assert.ok(completedAt <= Date.parse(completeCommand.created_at), "the form before the task's completion");
    const drafts = await responsesOf("Koulukatu 3");
    assert.deepEqual(
      drafts.map((d) => [d.url, d.state, d.data.condition]),
      [[draft.body.url, "completed", "Damaged"]],
      "the dispatcher's draft, completed by the phone",
    );

    // The phone lists each task's documents, read for the whole day in one request (?task__in=).
    for (const [street, list] of [
      ["Kauppakatu 1", docs],
      ["Rantatie 2", photo],
    ]) {
      await open(street);
      const shown = list.body.results[0].description || list.body.results[0].file_name;
      await page.getByRole("link", { name: shown }).waitFor({ timeout: 5_000 });
      await back();
    }

    await page.getByRole("listitem", { name: "Satamakatu 5" }).getByRole("link").click();
    await page
      .getByRole("alert")
      .filter({ hasText: /Refused: .*cancel/i })
      .waitFor();
    await axe(page, "refused");
    await page.screenshot({ path: `${OUT}/field-refused.png` });

    // Another language (contract Part four): the same screen in Finnish.
    await page.goto(`${BASE}/app/?lang=fi`);
    await page.getByRole("list", { name: "Tänään" }).waitFor();
    await page.screenshot({ path: `${OUT}/field-today-fi.png` });

    assert.deepEqual(foreign, [], "no request off the service's origin");
    assert.deepEqual(throttled, [], "no request of the app throttled");
    const busiest = Math.max(
      ...[...sent.values()].flatMap((times) =>
        times.map((t) => times.filter((u) => u >= t && u < t + 1000).length),
      ),
    );
    log("the most API requests of one page within a second:", busiest);
    assert.ok(busiest <= 20, `${busiest} requests within a second, past the token's 20 (contract §10)`);
    log("ok: offline actions applied once and in order, proof attached, the refusal shown");
  } finally {
    await browser.close();
  }
}

run(main, svc);
