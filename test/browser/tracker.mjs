#!/usr/bin/env node
import assert from "node:assert/strict";
// `npm run test:browser`: the recipient's tracking page (contract §17) in a real browser.
// Starts the service with the README's dev command on its own port, creates an account, a
// worker, tasks and a tracker through the API, then opens the public page in Debian's Chromium
// (playwright-core with `executablePath`; Playwright's own browser download is not used) at
// phone size: checks the status, the ETA, the language switch (Accept-Language: fi-FI), that
// the page updates itself within 30 s of a change, and saves screenshots to test-output/. Then the
// proof of delivery and the route report (documents.mjs): PDFs as PNG pages, HTML screenshots.
// Needs /usr/bin/chromium (Debian: apt-get install chromium); CHROMIUM_PATH overrides it; and
// Poppler's pdftoppm and pdftotext (Debian: apt-get install poppler-utils).
import { mkdirSync } from "node:fs";
import { documents } from "./documents.mjs";
import { launch, run, service } from "./harness.mjs";

const svc = service(Number(process.env.BROWSER_TEST_PORT || 8797), "tracker");
const { base: BASE, api, log } = svc;

async function main() {
  await svc.ready();
  const email = `browser-${Date.now()}@example.test`;
  const password = "browser test password";
  assert.equal((await api("/accounts/", { body: { name: "Browser test", email, password } })).status, 201);
  const { token } = (await api("/authenticate/", { body: { username: email, password } })).body;
  const me = (await api("/users/me/", { token })).body;
  const worker = await api("/users/", {
    token,
    body: { email: `w-${email}`, name: "Aino", password, role: "worker" },
  });
  const workerToken = (await api("/authenticate/", { body: { username: `w-${email}`, password } })).body
    .token;
  const task = await api("/tasks/", {
    token,
    body: {
      account: me.account,
      category: "drop_off",
      address: {
        raw_address: "Kauppakatu 1, Tallinn",
        location: { type: "Point", coordinates: [24.75, 59.44] },
      },
      assignee: worker.body.url,
    },
  });
  const waiting = await api("/tasks/", {
    token,
    body: {
      account: me.account,
      category: "drop_off",
      address: { raw_address: "Tartu", location: { type: "Point", coordinates: [26.72, 58.38] } },
    },
  });
  const command = (action, t = task.body) =>
    api("/task_commands/", {
      token: workerToken,
      body: {
        task: t.url,
        external_id: `b-${action}-${Date.now()}`,
        time: new Date().toISOString(),
        action,
        location: { type: "Point", coordinates: [24.7, 59.43] },
      },
    });
  assert.equal((await command("accept")).body.state, "accepted");
  const tracker = await api("/trackers/", { token, body: { tasks: [task.body.url, waiting.body.url] } });
  assert.equal(tracker.status, 201, tracker.text);
  const url = tracker.body.public_url.replace(/^https?:\/\/[^/]+/, BASE);
  log("page", url);

  const browser = await launch();
  mkdirSync("test-output", { recursive: true });
  try {
    const phone = {
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    };
    const en = await browser.newContext({ ...phone, locale: "en-GB" });
    const page = await en.newPage();
    // Nothing the page does may log an error in the recipient's browser (a missing favicon,
    // a CSP refusal, a failed request).
    const consoleErrors = [];
    page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
    page.on("requestfailed", (r) => consoleErrors.push(`request failed: ${r.url()}`));
    page.on("response", (r) => r.status() >= 400 && consoleErrors.push(`${r.status()} ${r.url()}`));
    await page.goto(url);
    const states = await page.locator(".state").allTextContents();
    assert.deepEqual(states.sort(), ["Driver assigned", "Waiting for a driver"]);
    const eta = await page.locator(".eta time").getAttribute("datetime");
    assert.ok(eta && new Date(eta).getTime() > Date.now() - 60_000, `an ETA: ${eta}`);
    assert.match(await page.locator(".eta-error").textContent(), /No driver has been assigned yet/);
    await page.screenshot({ path: "test-output/tracker-phone-en.png", fullPage: true });
    await page.waitForTimeout(500);
    assert.deepEqual(consoleErrors, [], "no console error, no failed request");

    const fi = await browser.newContext({ ...phone, locale: "fi-FI" });
    const pageFi = await fi.newPage();
    await pageFi.goto(url);
    assert.equal(await pageFi.locator("html").getAttribute("lang"), "fi");
    assert.match(await pageFi.locator(".eta-error").textContent(), /Kuljettajaa ei ole vielä määrätty/);
    assert.deepEqual((await pageFi.locator(".state").allTextContents()).sort(), [
      "Kuljettaja määrätty",
      "Odottaa kuljettajaa",
    ]);
    assert.equal(await pageFi.locator("h1").textContent(), "Toimituksen seuranta");
    await pageFi.screenshot({ path: "test-output/tracker-phone-fi.png", fullPage: true });

    // A change shows by itself within a second, without a reload (contract §25): the page's
    // script follows the tracker's stream and swaps its content in place. A marker set on
    // `window` would not survive a reload.
    await page.evaluate(() => {
      window.__stillThisPage = true;
    });
    await page.waitForTimeout(500); // the stream is open
    const answered = await command("transit");
    const t0 = Date.now();
    assert.equal(answered.body.state, "accepted");
    await page.locator(".state", { hasText: "On the way" }).waitFor({ timeout: 5_000 });
    const delay = Date.now() - t0;
    assert.equal(await page.evaluate(() => window.__stillThisPage), true, "the page was not reloaded");
    assert.ok(delay < 1000, `the change showed ${delay} ms after the command's answer`);
    assert.equal(await page.locator("html").getAttribute("lang"), "en");
    await page.screenshot({ path: "test-output/tracker-phone-transit.png", fullPage: true });
    log(
      `ok: status, ETA, language switch, live update in ${delay} ms without a reload; screenshots in test-output/`,
    );
    // With scripts off, the page still refreshes itself every 30 s.
    const noScript = await browser.newContext({ ...phone, locale: "en-GB", javaScriptEnabled: false });
    const still = await noScript.newPage();
    await still.goto(url);
    assert.equal(await still.locator("noscript").count(), 1);
    await noScript.close();
    await documents({ api, BASE, browser, token, me, worker, log });
  } finally {
    await browser.close();
  }
}

run(main, svc);
