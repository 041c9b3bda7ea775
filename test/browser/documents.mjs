// Part of `npm run test:browser` (test/browser/tracker.mjs starts the dev server and calls this):
// the proof of delivery (contract §19) and the route report (§16) as a person sees them. Through
// the API, an account set to Polish gets a completed task and an optimized route whose contacts
// and addresses are Cyrillic, Polish, Latvian and Lithuanian; their PDFs are saved to test-output/
// and turned into PNG pages by Poppler's pdftoppm (Debian: poppler-utils), the HTML report is
// screenshot in Chromium at phone size and at A4 width. pdftotext reads each PDF back: the names
// must come out intact. Look at the PNGs: they are what a recipient prints.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { sendRetrying429 } from "../../bench/lib/harness.mjs";

const OUT = "test-output";
const CONTACTS = ["Пётр Иванов", "Łukasz Żółtowski", "Jānis Bērziņš", "Šarūnas Žukauskas", "Мария Кузнецова"];
const STREETS = [
  "ulica Piotrkowska 104/12, 90-001 Łódź",
  "ulica Zgierska 45, 91-446 Łódź",
  "Baznīcas iela 5, Kuldīga",
  "Vilniaus gatvė 213, Šiauliai",
  "aleja Kościuszki 80, 90-437 Łódź",
];

/** PDF → PNG pages (`name-1.png`, ...) at 80 dpi, and its text as pdftotext extracts it. */
function rasterize(bytes, name) {
  const pdf = `${OUT}/${name}.pdf`;
  writeFileSync(pdf, bytes);
  try {
    execFileSync("pdftoppm", ["-png", "-r", "80", pdf, `${OUT}/${name}`]);
  } catch (err) {
    throw new Error(`pdftoppm failed (Debian: apt-get install poppler-utils): ${err.message}`);
  }
  return execFileSync("pdftotext", ["-layout", pdf, "-"], { encoding: "utf8" });
}

export async function documents({ api, BASE, browser, token, me, worker, log }) {
  assert.equal(
    (
      await api(`/accounts/${me.account.split("/").at(-2)}/`, {
        token,
        method: "PATCH",
        body: { language: "pl", timezone: "Europe/Warsaw" },
      })
    ).status,
    200,
  );
  const pdfOf = async (path, headers = {}) => {
    const get = () =>
      fetch(`${BASE}${path}`, {
        headers: { Authorization: `Bearer ${token}`, Accept: "application/pdf", ...headers },
      });
    // Over the dev server's rate limit: wait what Retry-After says, as `api` does.
    const res = await sendRetrying429(get, 5);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get("content-type"), "application/pdf");
    return new Uint8Array(await res.arrayBuffer());
  };

  // A proof of delivery: a long Polish address, a Russian contact, Baltic notes.
  const task = await api("/tasks/", {
    token,
    body: {
      account: me.account,
      category: "drop_off",
      address: {
        raw_address: `${STREETS[0]} (wejście od podwórza, domofon 12), województwo łódzkie, Polska`,
        location: { type: "Point", coordinates: [19.457, 51.759] },
      },
      contact: { name: CONTACTS[0], phones: ["+48600100200"] },
      description: "Karton 3 kg — ostrożnie; Kuldīga → Šiauliai",
      assignee: me.url,
    },
  });
  assert.equal(task.status, 201, task.text);
  for (const action of ["transit", "complete"]) {
    const r = await api("/task_commands/", {
      token,
      body: {
        task: task.body.url,
        external_id: `doc-${action}-${Date.now()}`,
        time: new Date().toISOString(),
        action,
        notes: action === "complete" ? "Zostawiono u sąsiada (Jānis Bērziņš, Šiauliai)" : "",
        location: { type: "Point", coordinates: [19.457, 51.759] },
      },
    });
    assert.equal(r.body.state, "accepted", r.text);
  }
  const podText = rasterize(await pdfOf(`/tasks/${task.body.id}/pod/`), "pod-pl");
  for (const s of [CONTACTS[0], "Łódź", "Jānis Bērziņš", "Šiauliai", "Potwierdzenie dostawy", "Zrealizowane"])
    assert.ok(podText.includes(s), `the POD PDF reads back "${s}":\n${podText}`);

  // A route of 14 stops around Łódź from the worker's depot, optimized on the queue.
  const roles = await api("/account_roles/?page_size=100", { token });
  const role = roles.body.results.find((r) => r.user === worker.body.url);
  const depot = {
    raw_address: "Magazyn, ulica Rokicińska 144, Łódź",
    location: { type: "Point", coordinates: [19.55, 51.75] },
  };
  assert.equal(
    (
      await api(`/account_roles/${role.id}/`, {
        token,
        method: "PATCH",
        body: { start_address: depot, end_address: depot },
      })
    ).status,
    200,
  );
  const route = await api("/routes/", {
    token,
    body: { name: "Trasa Łódź–Bałuty (Пётр)", assignee: worker.body.url, date: "2030-06-03" },
  });
  assert.equal(route.status, 201, route.text);
  for (let i = 0; i < 14; i++) {
    const t = await api("/tasks/", {
      token,
      body: {
        account: me.account,
        category: "drop_off",
        route: route.body.url,
        duration: "00:05:00",
        description:
          i % 2
            ? ""
            : `Paczka ${i + 1}: ${CONTACTS[(i + 2) % 5]}, ${i % 4 ? "brama od ulicy" : "dzwonić dwa razy przed wejściem"}`,
        contact: { name: CONTACTS[i % 5] },
        address: {
          raw_address: i < 10 ? "Łódź, Polska" : STREETS[i % 5],
          location: {
            type: "Point",
            coordinates: [19.46 + Math.cos(i * 1.1) * 0.04, 51.77 + Math.sin(i * 0.9) * 0.025],
          },
        },
      },
    });
    assert.equal(t.status, 201, t.text);
  }
  const opt = await api("/route_optimizations/", { token, body: { routes: [route.body.url] } });
  assert.equal(opt.status, 202, opt.text);
  let done = null;
  for (let i = 0; i < 120 && !done; i++) {
    const r = await api(`/route_optimizations/${opt.body.id}/`, { token });
    if (r.body.state === "completed" || r.body.state === "failed") done = r.body;
    else await new Promise((res) => setTimeout(res, 500));
  }
  assert.equal(done?.state, "completed", JSON.stringify(done));
  const reportPath = `/route_optimizations/${opt.body.id}/report/`;
  const reportText = rasterize(await pdfOf(reportPath), "route-report-pl");
  for (const s of [
    "Optymalizacja tras",
    "Przystanek",
    CONTACTS[0],
    "Łukasz Żółtowski",
    "Jānis Bērziņš",
    "Šarūnas Žukauskas",
  ])
    assert.ok(reportText.includes(s), `the report PDF reads back "${s}":\n${reportText}`);
  // Accept-Language wins over the account's language.
  const lvText = rasterize(await pdfOf(reportPath, { "Accept-Language": "lv-LV" }), "route-report-lv");
  assert.ok(lvText.includes("Maršrutu optimizācija"), lvText);

  for (const [name, viewport] of [
    ["phone", { width: 390, height: 844 }],
    ["a4", { width: 794, height: 1123 }],
  ]) {
    const context = await browser.newContext({
      viewport,
      deviceScaleFactor: name === "phone" ? 2 : 1,
      isMobile: name === "phone",
      // Chromium sends its locale as Accept-Language, which the report follows.
      locale: "pl-PL",
      extraHTTPHeaders: { Authorization: `Bearer ${token}` },
    });
    const page = await context.newPage();
    await page.goto(`${BASE}${reportPath}`);
    assert.equal(
      await page.locator("h1").first().textContent(),
      `Optymalizacja tras ${opt.body.id.slice(0, 8)}`,
    );
    assert.equal(await page.locator("svg.map").count(), 1);
    // The map fits the screen: no sideways scrolling on a phone.
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1));
    await page.screenshot({ path: `${OUT}/route-report-${name}.png`, fullPage: true });
    const pod = await context.newPage();
    await pod.goto(`${BASE}/tasks/${task.body.id}/pod/`);
    await pod.screenshot({ path: `${OUT}/pod-${name}.png`, fullPage: true });
    await context.close();
  }
  log("ok: POD and route report PDFs (pdftoppm PNGs) and HTML screenshots in test-output/");
}
