#!/usr/bin/env node
// `npm run test:browser` (part): the field app's running day (contract §30) in Debian's Chromium
// at 360×640, with Playwright's geolocation: the worker finds the switch "On duty" (role
// `switch`), turns it on; the phone's position reaches the API (`GET /users/{id}/` as the
// dispatcher sees it) and Today's items show their "ETA"; off duty, no position is sent. axe-core
// on Today; screenshots in English and Polish to test-output/field-duty-*.png.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { axe, launch, run, service } from "./harness.mjs";

const svc = service(Number(process.env.FIELD_DUTY_TEST_PORT || 8799), "field-duty");
const { base: BASE, api, log } = svc;
const OUT = "test-output";
const ok = (r, status = [200, 201, 202]) => {
  assert.ok([status].flat().includes(r.status), `${r.status} ${r.text}`);
  return r.body;
};

async function main() {
  await svc.ready();
  mkdirSync(OUT, { recursive: true });
  const stamp = Date.now();
  const email = `duty-${stamp}@example.test`;
  const password = "field duty test password";
  ok(await api("/accounts/", { body: { name: "Duty test", email, password } }));
  const admin = ok(await api("/authenticate/", { body: { username: email, password } })).token;
  const me = ok(await api("/users/me/", { token: admin }));
  const workerEmail = `aino-${email}`;
  const worker = ok(
    await api("/users/", {
      token: admin,
      body: { email: workerEmail, name: "Aino", password, role: "worker" },
    }),
  );
  const today = new Date().toISOString().slice(0, 10);
  const made = [];
  for (const [i, [street, lon, lat]] of [
    ["Aleksanterinkatu 1", 24.95, 60.17],
    ["Hämeentie 5", 24.96, 60.185],
  ].entries()) {
    made.push(
      ok(
        await api("/tasks/", {
          token: admin,
          body: {
            account: me.account,
            category: "drop_off",
            address: {
              raw_address: `${street}, Helsinki`,
              location: { type: "Point", coordinates: [lon, lat] },
            },
            complete_after: `${today}T00:00:00Z`,
            complete_before: `${today}T23:59:00Z`,
            assignee: worker.url,
            position: i + 1,
          },
        }),
      ),
    );
  }
  const browser = await launch();
  const problems = [];
  try {
    for (const lang of ["en", "pl"]) {
      const context = await browser.newContext({
        viewport: { width: 360, height: 640 },
        locale: lang === "en" ? "en-GB" : "pl-PL",
        geolocation: { latitude: 60.172, longitude: 24.93 },
        permissions: ["geolocation"],
      });
      const page = await context.newPage();
      page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
      page.on("request", (r) => {
        if (!r.url().startsWith(BASE) && !r.url().startsWith("data:") && !r.url().startsWith("blob:"))
          problems.push(`off-origin request: ${r.url()}`);
      });
      await page.goto(`${BASE}/app/?lang=${lang}`);
      await page.locator("input[type=email]").fill(workerEmail);
      await page.locator("input[type=password]").fill(password);
      await page.locator("button[type=submit]").click();
      await page.locator("ul.today li").first().waitFor({ timeout: 15_000 });
      if (lang === "pl") {
        await page.screenshot({ path: `${OUT}/field-duty-pl.png` });
        await axe(page, "Today with the duty switch (pl)", log);
        await context.close();
        continue;
      }
      const duty = page.getByRole("switch", { name: "On duty" });
      assert.equal(await duty.getAttribute("aria-checked"), "false");
      await duty.click();
      await page.waitForFunction(
        () => document.querySelector("[role=switch]")?.getAttribute("aria-checked") === "true",
      );
      // The position reaches the API, as the dispatcher reads it.
      let user = null;
      for (let i = 0; i < 40 && !user?.position; i++) {
        await page.waitForTimeout(250);
        user = ok(await api(`/users/${worker.id}/`, { token: admin }));
      }
      assert.ok(user.position, "the phone's position reached the API");
      assert.deepEqual(user.position.location.coordinates, [24.93, 60.172]);
      const role = ok(await api("/account_roles/?role=worker", { token: admin })).results.find(
        (r) => r.user === worker.url,
      );
      assert.equal(role.on_duty, true);
      // Today reads its ETAs again once the position is sent.
      await page
        .locator("ul.today li")
        // An ETA past midnight carries its date ("ETA Tue 1 Dec, 00:05").
        .filter({ hasText: /ETA (\w{3},? [\w ]+, )?\d\d:\d\d/ })
        .first()
        .waitFor({ timeout: 10_000 });
      await axe(page, "Today on duty", log);
      await page.screenshot({ path: `${OUT}/field-duty-en.png` });
      // Off duty: the switch says so, the API too, and a new place is not sent.
      await duty.click();
      await page.waitForFunction(
        () => document.querySelector("[role=switch]")?.getAttribute("aria-checked") === "false",
      );
      assert.equal(
        ok(await api("/account_roles/?role=worker", { token: admin })).results.find(
          (r) => r.user === worker.url,
        ).on_duty,
        false,
      );
      const before = ok(await api(`/positions/?user=${worker.id}`, { token: admin })).results.length;
      await context.setGeolocation({ latitude: 60.3, longitude: 25.2 });
      await page.waitForTimeout(2000);
      const after = ok(await api(`/positions/?user=${worker.id}`, { token: admin })).results.length;
      assert.equal(after, before, "no position sent off duty");
      log("on duty: the position reached the API, ETA shown; off duty: none sent");
      // The dispatcher re-plans (the first stop goes last): Today follows through the stream,
      // without a reload, and says the order changed.
      assert.match(await page.locator("ul.today li").first().textContent(), /Aleksanterinkatu/);
      ok(
        await api("/task_commands/", {
          token: admin,
          body: {
            task: made[0].url,
            external_id: `replan-${stamp}`,
            time: new Date().toISOString(),
            action: "update",
            task_data: { position: 3 },
          },
        }),
      );
      const moved = Date.now();
      await page
        .getByRole("status")
        .filter({ hasText: "Your day was re-planned" })
        .waitFor({ timeout: 10_000 });
      assert.match(await page.locator("ul.today li").first().textContent(), /Hämeentie/);
      log(`re-planned: Today's new order shown and told ${Date.now() - moved} ms after the change`);
      await page.screenshot({ path: `${OUT}/field-duty-replanned-en.png` });
      await context.close();
    }
    assert.deepEqual(problems, []);
    log("ok; screenshots in test-output/field-duty-*.png");
  } finally {
    await browser.close();
  }
}

run(main, svc);
