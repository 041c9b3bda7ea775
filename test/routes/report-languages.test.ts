import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { uuidv7 } from "../../src/lib/ids";
import { call, expectStatus, newAccount, type TestAccount } from "../helpers";
import { expectNoOverlap, pdfPages } from "../pdf";
import { stored } from "../stored";

const BASE = "https://api.test";
const STOPS = 70;
// Thirty stops at one formatted address, as geocoding leaves them: only their names tell them apart.
const CITY = "Łódź, Polska";

/**
 * A completed optimization stored as the queue consumer stores it (contract §16's `result`), over
 * tasks written straight to D1: the report is what is tested here, not the solver.
 */
async function storedReport(acc: TestAccount, language: string) {
  expectStatus(
    await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { language, timezone: "Europe/Riga" },
    }),
    200,
  );
  const now = Date.now();
  const routeId = uuidv7();
  const depot = JSON.stringify({
    raw_address: "Kuldīga, Baznīcas iela 5",
    location: { type: "Point", coordinates: [19.4, 51.8] },
  });
  const statements = [
    stored
      .prepare(
        "INSERT INTO routes (id, account_id, name, state, start_address, end_address, created_at, updated_at) VALUES (?, ?, ?, 'draft', ?, ?, ?, ?)",
      )
      .bind(routeId, acc.account.id, "Maršruts Šiauliai–Łódź (Пётр)", depot, depot, now, now),
  ];
  const taskIds: string[] = [];
  for (let i = 0; i < STOPS; i++) {
    const id = uuidv7();
    const orderId = uuidv7();
    taskIds.push(id);
    const address = {
      raw_address: CITY,
      formatted_address: i % 3 === 0 ? `Piotrkowska ${i + 1}, 90-${String(100 + i)} ${CITY}` : CITY,
      location: {
        type: "Point",
        coordinates: [19.45 + Math.cos(i) * 0.04, 51.76 + Math.sin(i * 1.7) * 0.025],
      },
    };
    const contact = { name: i % 2 ? `Пётр Иванов ${i + 1}` : "", phones: [], emails: [] };
    const description =
      i % 2
        ? ""
        : `Kuldīgas novada pašvaldības aģentūras noliktava, vārti Nr. ${i + 1}, zvanīt iepriekš ${"ļoti ".repeat(6)}`;
    statements.push(
      stored
        .prepare(
          "INSERT INTO orders (id, account_id, reference, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(orderId, acc.account.id, `ŠIA-${1000 + i}`, now, now),
      stored
        .prepare(
          `INSERT INTO tasks (id, account_id, state, category, description, address, contact, order_id, route_id, position, created_at, updated_at)
         VALUES (?, ?, 'assigned', 'drop_off', ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .bind(
          id,
          acc.account.id,
          description,
          JSON.stringify(address),
          JSON.stringify(contact),
          orderId,
          routeId,
          i,
          now,
          now,
        ),
    );
  }
  const t0 = Date.parse("2030-06-03T05:00:00Z");
  const stops = taskIds.map((id, i) => ({
    task: `${BASE}/tasks/${id}/`,
    arrival: new Date(t0 + i * 600_000).toISOString(),
    start: new Date(t0 + i * 600_000).toISOString(),
    departure: new Date(t0 + i * 600_000 + 300_000).toISOString(),
    distance_m: 1200 + i,
    duration_s: 130,
  }));
  const unassignedId = uuidv7();
  statements.push(
    stored
      .prepare(
        `INSERT INTO tasks (id, account_id, state, category, description, address, contact, created_at, updated_at)
       VALUES (?, ?, 'unassigned', 'drop_off', 'Šiauliai sandėlis', '{"raw_address":"Šiauliai, Vilniaus g. 1"}', '{}', ?, ?)`,
      )
      .bind(unassignedId, acc.account.id, now, now),
  );
  const result = {
    routes: [{ route: `${BASE}/routes/${routeId}/`, stops, distance_m: 90_000, duration_s: 7 * 3600 + 125 }],
    unassigned: [{ task: `${BASE}/tasks/${unassignedId}/`, reason: "unreachable" }],
    distance_m: 90_000,
    duration_s: 7 * 3600 + 125,
  };
  const optimizationId = uuidv7();
  statements.push(
    stored
      .prepare(
        "INSERT INTO route_optimizations (id, account_id, state, route_ids, task_ids, result, created_at, updated_at) VALUES (?, ?, 'completed', ?, ?, ?, ?, ?)",
      )
      .bind(
        optimizationId,
        acc.account.id,
        JSON.stringify([routeId]),
        JSON.stringify(taskIds),
        JSON.stringify(result),
        now,
        now,
      ),
  );
  await stored.batch(statements);
  return optimizationId;
}

const report = (acc: TestAccount, id: string, headers: Record<string, string> = {}, query = "?format=pdf") =>
  exports.default.fetch(
    new Request(`${BASE}/route_optimizations/${id}/report/${query}`, {
      headers: { Authorization: `Bearer ${acc.admin.token}`, ...headers },
    }),
  );

describe("GET /route_optimizations/{id}/report/ in the reader's language (contract §16)", () => {
  it("a 70-stop route with long names: pages with the header row on each, no text over other text, every stop named", async () => {
    const acc = await newAccount();
    const id = await storedReport(acc, "lv");
    const res = await report(acc, id);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Language")).toBe("lv");
    const pages = await pdfPages(new Uint8Array(await res.arrayBuffer()));
    expect(pages.length).toBeGreaterThan(3);
    for (const [i, p] of pages.entries()) expectNoOverlap(p, `page ${i + 1}`);
    const text = pages.map((p) => p.text).join("\n");
    for (const s of [
      "Maršrutu optimizācija",
      "Pietura",
      "Ierašanās",
      "Izbraukšana",
      "Nepiešķirtie uzdevumi",
      "Laika josla: Europe/Riga",
    ])
      expect(text, s).toContain(s);
    // Durations in Latvian units; the unassigned reason in Latvian.
    expect(text).toContain("7 st. 02 min");
    expect(text).toContain("nav atrašanās vietas vai nav ceļa līdz tai");
    for (const s of ["Пётр Иванов 2", "Kuldīgas novada", "ŠIA-1069", "Łódź", "Šiauliai sandėlis"])
      expect(text, s).toContain(s);
    // Every page after the first that lists stops leads with the table's header row.
    const tablePages = pages.filter((p) =>
      p.items.some((it) => it.str.startsWith("ŠIA-") || /ŠIA-\d+$/.test(it.str)),
    );
    expect(tablePages.length).toBeGreaterThan(2);
    for (const p of tablePages) expect(p.items.filter((it) => it.str === "Pietura")).toHaveLength(1);
    // Each stop's name is there, and the 30 stops at "Łódź, Polska" are told apart by it and their order number.
    for (let i = 0; i < 70; i++) expect(text, `stop ${i + 1}`).toContain(`ŠIA-${1000 + i}`);
  });

  it("the HTML names the stops and draws the route; Accept-Language overrides the account's language", async () => {
    const acc = await newAccount();
    const id = await storedReport(acc, "ru");
    const html = await (await report(acc, id, {}, "")).text();
    expect(html).toContain('<html lang="ru">');
    expect(html).toContain("Оптимизация маршрутов");
    expect(html).toContain("Пётр Иванов 2 · ŠIA-1001");
    expect(html).toContain("<svg");
    expect((html.match(/<polyline /g) ?? []).length).toBe(1);
    // A square for the start and end, which are one place here.
    expect(html).toContain("<title>Начало и конец маршрута</title>");
    const pl = await report(acc, id, { "Accept-Language": "pl-PL, ru;q=0.5" });
    expect(pl.headers.get("Content-Language")).toBe("pl");
    const text = (await pdfPages(new Uint8Array(await pl.arrayBuffer()))).map((p) => p.text).join("\n");
    for (const s of [
      "Optymalizacja tras",
      "Przystanek",
      "Odjazd",
      "Nieprzydzielone zadania",
      "7 godz. 02 min",
    ])
      expect(text, s).toContain(s);
    const html2 = await (await report(acc, id, { "Accept-Language": "pl-PL, ru;q=0.5" }, "")).text();
    for (const s of ["Optymalizacja tras", "Przystanek", "Odjazd", "Nieprzydzielone zadania"])
      expect(html2, s).toContain(s);
  });
});
