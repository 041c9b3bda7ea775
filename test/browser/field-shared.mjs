#!/usr/bin/env node
// `npm run test:browser` (part): the field app on a phone two workers share (issue 52 items 1
// and 2), in Debian's Chromium at 360×640. Aino queues Accept, Start, Arrived and Complete with a
// signature offline; the dispatcher sets her password meanwhile, which ends her session; back
// online (the page left open) the app asks to sign in. Bertil signs in on the same page while
// his task list cannot be fetched: his "Today" shows nothing of Aino's, "All sent" counts none of
// her actions, nothing of hers is sent with his token, and her day is gone from IndexedDB.
// Bertil signs out; Aino signs in again and her queue goes, once, in order, as hers. On another
// phone, an action of hers 8 days old (the page's clock) is discarded at her next sign-in, and
// she is told so.
// axe-core on each screen; screenshots to test-output/field-shared-*.png.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { axe, launch, run, service } from "./harness.mjs";

const svc = service(Number(process.env.FIELD_SHARED_TEST_PORT || 8796), "field-shared");
const { base: BASE, api, log } = svc;
const OUT = "test-output";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Everything the app keeps in IndexedDB's `kv` store, as text (what a next user could read). */
const keptText = (page) =>
  page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const open = indexedDB.open("field-app");
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const req = open.result.transaction("kv").objectStore("kv").getAll();
          req.onsuccess = () => {
            resolve(JSON.stringify(req.result));
            open.result.close();
          };
          req.onerror = () => reject(req.error);
        };
      }),
  );

async function main() {
  await svc.ready();
  mkdirSync(OUT, { recursive: true });
  const stamp = Date.now();
  const email = `shared-${stamp}@example.test`;
  const password = "shared phone password";
  assert.equal((await api("/accounts/", { body: { name: "Shared phone", email, password } })).status, 201);
  const admin = (await api("/authenticate/", { body: { username: email, password } })).body.token;
  const me = (await api("/users/me/", { token: admin })).body;
  const user = async (name) => {
    const r = await api("/users/", {
      token: admin,
      body: { email: `${name.toLowerCase()}-${email}`, name, password, role: "worker" },
    });
    assert.equal(r.status, 201, r.text);
    return r.body;
  };
  const aino = await user("Aino");
  const bertil = await user("Bertil");
  const today = new Date().toISOString().slice(0, 10);
  const task = async (street, assignee) => {
    const r = await api("/tasks/", {
      token: admin,
      body: {
        account: me.account,
        category: "drop_off",
        address: { raw_address: `${street}, Tampere, Finland` },
        contact: { name: `At ${street}`, phones: ["+358 40 123 4567"] },
        complete_after: `${today}T00:00:00Z`,
        complete_before: `${today}T23:59:00Z`,
        assignee: assignee.url,
      },
    });
    assert.equal(r.status, 201, r.text);
    return r.body;
  };
  const ainos = await task("Mäkitie 1", aino);
  const second2 = await task("Mäkitie 2", aino);
  await task("Bertilinkatu 3", bertil);

  const browser = await launch();
  const context = await browser.newContext({
    viewport: { width: 360, height: 640 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    locale: "en-GB",
  });
  const foreign = [];
  context.on("request", (req) => {
    if (!req.url().startsWith(BASE) && !req.url().startsWith("data:")) foreign.push(req.url());
  });
  try {
    const page = await context.newPage();
    const status = (text) => page.getByRole("status").filter({ hasText: text });
    const press = (name) => page.getByRole("button", { name, exact: true }).click();
    const signIn = async (who, pass) => {
      await page.getByRole("textbox", { name: "Email" }).fill(who);
      await page.getByRole("textbox", { name: "Password" }).fill(pass);
      await press("Sign in");
    };
    await page.goto(`${BASE}/app/?lang=en`);
    await signIn(aino.email, password);
    await page.getByRole("listitem", { name: "Mäkitie 1" }).waitFor();
    await status("All sent").waitFor();
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));

    // Offline, Aino's visit with a signature: four actions waiting.
    await context.setOffline(true);
    await page.getByRole("listitem", { name: "Mäkitie 1" }).getByRole("link").click();
    await page.getByRole("heading", { name: "Mäkitie 1" }).waitFor();
    await press("Accept");
    await press("Start");
    await press("Arrived");
    await press("Complete");
    const dialog = page.getByRole("dialog", { name: "Proof of delivery" });
    const box = await dialog.getByRole("img", { name: "Signature" }).boundingBox();
    await page.mouse.move(box.x + 20, box.y + 40);
    await page.mouse.down();
    for (let i = 1; i <= 8; i++) await page.mouse.move(box.x + 20 + i * 25, box.y + 40 + (i % 2) * 30);
    await page.mouse.up();
    await dialog.getByRole("button", { name: "Complete the task" }).click();
    await dialog.waitFor({ state: "detached" });
    await status("4 waiting").waitFor();

    // Her session ends elsewhere: the dispatcher sets a new password (every session ends).
    const newPassword = "a new password for Aino";
    const reset = await api(`/users/${aino.id}/`, {
      method: "PATCH",
      token: admin,
      body: { password: newPassword },
    });
    assert.equal(reset.status, 200, reset.text);

    // Back online, the page left open: the 401 brings the sign-in screen.
    await context.setOffline(false);
    await page.getByRole("alert").filter({ hasText: "Your session has ended" }).waitFor({ timeout: 15_000 });
    await page.screenshot({ path: `${OUT}/field-shared-expired.png` });

    // Bertil signs in on the same phone while his task list cannot be fetched (a flaky network).
    const listOfTasks = (url) => new URL(url).pathname === "/tasks/";
    await page.route(listOfTasks, (route) => route.abort("internetdisconnected"));
    await signIn(bertil.email, password);
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    // What a person would see in two seconds: nothing of Aino's sent, shown or kept.
    await sleep(2_000);
    const commandsOf = async () => {
      const r = await api(`/task_commands/?task=${encodeURIComponent(ainos.url)}&page_size=100`, {
        token: admin,
      });
      assert.equal(r.status, 200, r.text);
      return r.body.results
        .filter((c) => c.external_id.startsWith("app-"))
        .sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
    };
    const signaturesOf = async () =>
      (await api(`/signatures/?task=${encodeURIComponent(ainos.url)}`, { token: admin })).body.results;
    assert.deepEqual(await signaturesOf(), [], "Aino's signature uploaded as Bertil's");
    assert.deepEqual(await commandsOf(), [], "Aino's commands sent with Bertil's token");
    await page.getByRole("heading", { name: "Today" }).waitFor();
    assert.equal(await page.getByRole("listitem", { name: /Mäkitie/ }).count(), 0, "Aino's day, to Bertil");
    await page.getByText("No tasks today.").waitFor();
    await status("All sent").waitFor();
    assert.equal(await status("waiting").count(), 0, "Aino's queue counted for Bertil");
    const kept = await keptText(page);
    assert.ok(
      !kept.includes("Mäkitie") && !kept.includes(aino.url),
      `Aino's day kept: ${kept.slice(0, 300)}`,
    );
    await axe(page, "today (next user)");
    await page.screenshot({ path: `${OUT}/field-shared-next-user.png` });
    assert.equal(page.url(), `${BASE}/app/?lang=en`, "Aino's task page, left at her session's end");
    await page.unroute(listOfTasks);

    // Bertil signs out (nothing of his waits); Aino signs in again: her queue goes, as hers.
    // Sign-out's Clear-Site-Data: "cache" clears the HTTP cache, not the app's precache (Cache
    // Storage is "storage" in W3C Clear Site Data): the next user still starts offline.
    const precached = () =>
      page.evaluate(async () => {
        let n = 0;
        for (const name of await caches.keys()) n += (await (await caches.open(name)).keys()).length;
        return n;
      });
    const before = await precached();
    assert.ok(before > 0, "the app precached");
    await press("Sign out");
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    await sleep(500);
    assert.equal(await precached(), before, "the app's precache after sign-out");
    await signIn(aino.email, newPassword);
    await page.getByRole("listitem", { name: "Mäkitie 1" }).waitFor();
    await status("All sent").waitFor({ timeout: 15_000 });
    const sent = await commandsOf();
    assert.deepEqual(
      sent.map((c) => [c.action, c.state, c.user]),
      ["accept", "transit", "activate", "complete"].map((a) => [a, "accepted", aino.url]),
      "Aino's actions, once, in order, as hers",
    );
    const signatures = await signaturesOf();
    assert.equal(signatures.length, 1, "the signature, once");
    assert.equal(signatures[0].created_by, aino.url);
    assert.equal((await api(`/tasks/${ainos.id}/`, { token: admin })).body.state, "completed");
    await axe(page, "today (owner again)");
    await page.screenshot({ path: `${OUT}/field-shared-owner-again.png` });

    // A queue left more than 7 days: discarded at the next sign-in, and its user told so. The
    // phone's clock says the action was made 8 days ago (Playwright's clock, this page only).
    const phone = await browser.newContext({ viewport: { width: 360, height: 640 }, locale: "en-GB" });
    await phone.clock.install();
    const old = await phone.newPage();
    await old.goto(`${BASE}/app/?lang=en`);
    await old.getByRole("textbox", { name: "Email" }).fill(aino.email);
    await old.getByRole("textbox", { name: "Password" }).fill(newPassword);
    await old.getByRole("button", { name: "Sign in" }).click();
    await old.getByRole("listitem", { name: "Mäkitie 2" }).getByRole("link").click();
    await phone.setOffline(true);
    await old.clock.setSystemTime(Date.now() - 8 * 86_400_000);
    await old.getByRole("button", { name: "Accept", exact: true }).click();
    await old.getByRole("status").filter({ hasText: "1 waiting" }).waitFor();
    await old.clock.setSystemTime(Date.now());
    const third = "Aino's third password";
    const again = await api(`/users/${aino.id}/`, {
      method: "PATCH",
      token: admin,
      body: { password: third },
    });
    assert.equal(again.status, 200, again.text);
    await phone.setOffline(false);
    await old.getByRole("alert").filter({ hasText: "Your session has ended" }).waitFor({ timeout: 15_000 });
    await old.getByRole("textbox", { name: "Email" }).fill(aino.email);
    await old.getByRole("textbox", { name: "Password" }).fill(third);
    await old.getByRole("button", { name: "Sign in" }).click();
    await old
      .getByRole("status")
      .filter({ hasText: "1 action you made on this phone was not sent within 7 days and was discarded." })
      .waitFor();
    await old.getByRole("status").filter({ hasText: "All sent" }).waitFor();
    await axe(old, "today (discarded notice)");
    await old.screenshot({ path: `${OUT}/field-shared-discarded.png` });
    const second = await api(`/task_commands/?task=${encodeURIComponent(second2.url)}&page_size=100`, {
      token: admin,
    });
    assert.deepEqual(
      second.body.results.filter((c) => c.external_id.startsWith("app-")),
      [],
      "an action past 7 days is not sent",
    );
    await phone.close();

    assert.deepEqual(foreign, [], "no request off the service's origin");
    log("ok: the queue went with its own user only; the next user saw nothing of the previous one's");
  } finally {
    await browser.close();
  }
}

run(main, svc);
