import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DETOUR, greatCircleMetres, type Point } from "../../src/services/routing";
import { addUser, call, defineMetafields, expectStatus, newAccount, type TestAccount } from "../helpers";
import { stored } from "../stored";

const SECRET = "SECRET-do-not-show";
const publicGet = (url: string, headers: Record<string, string> = {}) =>
  exports.default.fetch(
    new Request(url, {
      headers: { "CF-Connecting-IP": `198.51.100.${Math.floor(Math.random() * 200)}`, ...headers },
    }),
  );

async function secretTask(acc: TestAccount, extra: Record<string, unknown> = {}) {
  await defineMetafields(acc, "tasks", { note: "text" }).catch(() => undefined);
  const r = await call("/tasks/", {
    token: acc.admin.token,
    body: {
      account: acc.account.url,
      category: "drop_off",
      address: {
        raw_address: "Kauppakatu 1, Tallinn",
        location: { type: "Point", coordinates: [24.75, 59.44] },
      },
      contact: { name: SECRET, phones: ["+358401234567"], notes: SECRET },
      description: SECRET,
      metafields: { note: SECRET },
      complete_after: "2030-06-03T08:00:00Z",
      complete_before: "2030-06-03T12:00:00Z",
      ...extra,
    },
  });
  expectStatus(r, 201);
  return r.body;
}

describe("/trackers/ (contract §17)", () => {
  it("creates a tracker with the default allowlist, an unguessable public_url and a default expiry", async () => {
    const acc = await newAccount();
    const task = await secretTask(acc);
    const r = await call("/trackers/", { token: acc.admin.token, body: { tasks: [task.url] } });
    expectStatus(r, 201);
    expect(r.body.public_task_fields).toEqual([
      "state",
      "category",
      "address.formatted_address",
      "complete_after",
      "complete_before",
      "scheduled_time",
      "eta",
      "assignee.name",
    ]);
    expect(r.body.public_url).toMatch(/^https:\/\/api\.test\/t\/[A-Za-z0-9_-]{22}\/$/);
    expect(r.body.expires_at).toBe("2030-07-03T12:00:00.000Z");
  });

  it("refuses an empty allowlist, unknown fields and placeholders, too many tasks, other accounts' tasks", async () => {
    const acc = await newAccount();
    const task = await secretTask(acc);
    const other = await newAccount();
    const theirs = await secretTask(other);
    const cases: [Record<string, unknown>, string][] = [
      [{ tasks: [task.url], public_task_fields: [] }, "public_task_fields"],
      [{ tasks: [task.url], public_task_fields: ["contact.phones"] }, "public_task_fields"],
      [{ tasks: [task.url], task_popup_template: "Hi {{contact.notes}}" }, "task_popup_template"],
      [
        { tasks: [task.url], public_task_fields: ["state"], task_popup_template: "{{reference}}" },
        "task_popup_template",
      ],
      [{ tasks: [theirs.url] }, "tasks"],
      [
        { tasks: Array.from({ length: 501 }, () => `https://api.test/tasks/${crypto.randomUUID()}/`) },
        "tasks",
      ],
      [{}, "tasks"],
    ];
    for (const [body, field] of cases) {
      const r = await call("/trackers/", { token: acc.admin.token, body });
      expectStatus(r, 400);
      expect(Object.keys(r.body), JSON.stringify(body).slice(0, 80)).toContain(field);
    }
    const named = await call("/trackers/", {
      token: acc.admin.token,
      body: { tasks: [task.url], task_popup_template: "{{contact.notes}}" },
    });
    expect(named.body.task_popup_template[0]).toContain("{{contact.notes}}");
    const account = await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { tracker_task_popup_template: "{{metafields.note}} {{state}} {{contact.notes}}" },
    });
    expectStatus(account, 400);
    // Each unknown placeholder named, as a tracker's are (contract §17).
    expect(account.body.tracker_task_popup_template).toHaveLength(2);
    expect(account.body.tracker_task_popup_template[0]).toContain('"{{metafields.note}}"');
    expect(account.body.tracker_task_popup_template[1]).toContain('"{{contact.notes}}"');
    expect((await call("/trackers/", { token: acc.admin.token })).body.results).toEqual([]);
  });

  it("the public JSON shows exactly the allowlisted fields and nothing else of the task or account", async () => {
    const acc = await newAccount();
    await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { name: SECRET },
    });
    const task = await secretTask(acc);
    const t = await call("/trackers/", { token: acc.admin.token, body: { tasks: [task.url] } });
    const res = await publicGet(t.body.public_url, { Accept: "application/json" });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(SECRET);
    const body = JSON.parse(text);
    expect(Object.keys(body)).toEqual(["tasks"]);
    expect(Object.keys(body.tasks[0]).sort()).toEqual(
      [
        "state",
        "category",
        "address",
        "complete_after",
        "complete_before",
        "scheduled_time",
        "eta",
        "assignee",
        "predicted_delivery_error",
      ].sort(),
    );
    expect(Object.keys(body.tasks[0].address)).toEqual(["formatted_address"]);
    expect(body.tasks[0]).toMatchObject({ state: "unassigned", eta: null, assignee: { name: null } });
    expect(body.tasks[0].predicted_delivery_error).toMatch(/No driver has been assigned/);
    // `reference` appears only when listed.
    expect(body.tasks[0].reference).toBeUndefined();
  });

  it("eta from the worker's last known location; the error sentence in the reader's language", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker", "Aino");
    const task = await secretTask(acc, {
      assignee: worker.user,
      complete_after: null,
      complete_before: null,
    });
    await call("/task_commands/", {
      token: worker.token,
      body: {
        task: task.url,
        external_id: `e-${crypto.randomUUID()}`,
        time: new Date().toISOString(),
        action: "accept",
        location: { type: "Point", coordinates: [24.7, 59.43] },
      },
    });
    const waiting = await secretTask(acc);
    const t = await call("/trackers/", { token: acc.admin.token, body: { tasks: [task.url, waiting.url] } });
    const read = async (lang?: string) =>
      (await (
        await publicGet(t.body.public_url, {
          Accept: "application/json",
          ...(lang ? { "Accept-Language": lang } : {}),
        })
      ).json()) as any;
    const en = await read();
    const assigned = en.tasks.find((x: any) => x.state === "accepted");
    expect(assigned.assignee.name).toBe("Aino");
    expect(new Date(assigned.eta).getTime()).toBeGreaterThan(Date.now());
    expect(assigned.predicted_delivery_error).toBeNull();
    const fi = await read("fi-FI,fi;q=0.9,en;q=0.5");
    expect(fi.tasks.find((x: any) => x.state === "unassigned").predicted_delivery_error).toMatch(
      /Kuljettajaa ei ole vielä määrätty/,
    );
    const de = await read("xx, de;q=0.8, sv;q=0.5");
    expect(de.tasks.find((x: any) => x.state === "unassigned").predicted_delivery_error).toMatch(/Fahrer/);
    // Unknown languages fall back to the account's.
    await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { language: "sv" },
    });
    const sv = await read("xx-YY");
    expect(sv.tasks.find((x: any) => x.state === "unassigned").predicted_delivery_error).toMatch(/förare/);
  });

  it("eta of each stop: travel from the last location through the stops before it, their service times and windows", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker", "Aino");
    // Offline travel model (contract §16): great-circle × 1.3 at 40 km/h.
    const travel = (a: Point, b: Point) => (greatCircleMetres(a, b) * DETOUR) / (40_000 / 3600);
    const here: Point = [24.7, 59.43];
    const places: Point[] = [
      [24.72, 59.435],
      [24.76, 59.44],
      [24.8, 59.45],
    ];
    const waitUntil = Date.now() + 3 * 3600_000;
    const tasks = [];
    for (const [i, p] of places.entries()) {
      tasks.push(
        await secretTask(acc, {
          assignee: worker.user,
          address: { raw_address: `Stop ${i}`, location: { type: "Point", coordinates: p } },
          duration: "00:10:00",
          complete_after: i === 2 ? new Date(waitUntil).toISOString() : null,
          complete_before: null,
        }),
      );
    }
    await call("/task_commands/", {
      token: worker.token,
      body: {
        task: tasks[0].url,
        external_id: `e-${crypto.randomUUID()}`,
        time: new Date().toISOString(),
        action: "accept",
        location: { type: "Point", coordinates: here },
      },
    });
    const t = await call("/trackers/", {
      token: acc.admin.token,
      body: { tasks: [tasks[2].url, tasks[0].url, tasks[1].url] },
    });
    const asked = Date.now();
    const body = (await (await publicGet(t.body.public_url, { Accept: "application/json" })).json()) as any;
    // The public list is in the tasks' creation order, here the order they are driven.
    const eta = (i: number) => new Date(body.tasks[i].eta).getTime();
    expect(Math.abs(eta(0) - asked - travel(here, places[0]) * 1000)).toBeLessThan(5_000);
    expect(eta(1) - eta(0)).toBeCloseTo(600_000 + travel(places[0], places[1]) * 1000, -1);
    // The third waits for its window to open.
    expect(eta(2)).toBe(waitUntil);
  });

  it("the HTML page: status, refresh, strict CSP, escaped popup; expired and deleted trackers are 404", async () => {
    const acc = await newAccount();
    const task = await secretTask(acc);
    const t = await call("/trackers/", {
      token: acc.admin.token,
      body: {
        tasks: [task.url],
        public_task_fields: ["state", "category", "reference"],
        task_popup_template: "<b>{{category}}</b> <script>alert(1)</script>",
      },
    });
    expectStatus(t, 201);
    const res = await publicGet(t.body.public_url, { Accept: "text/html" });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(res.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    // With scripts off the page reloads itself; with them, its one same-origin script follows the stream.
    expect(html).toContain('<noscript><meta http-equiv="refresh" content="30"></noscript>');
    expect(html.match(/<script[^>]*>/g)).toEqual(['<script src="/t/live.js" defer>']);
    expect(res.headers.get("Content-Security-Policy")).toContain("script-src 'self'");
    expect(html).toContain("Waiting for a driver");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).not.toContain("<script>");
    expect(html).not.toContain(SECRET);
    await stored
      .prepare("UPDATE trackers SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, t.body.id)
      .run();
    const expired = await publicGet(t.body.public_url);
    expect(expired.status).toBe(404);
    const never = await publicGet("https://api.test/t/AAAAAAAAAAAAAAAAAAAAAA/");
    expect(await never.text()).toBe(await expired.text().catch(() => ""));
    const t2 = await call("/trackers/", { token: acc.admin.token, body: { tasks: [task.url] } });
    // Times are the recipient's local ones: the account's zone, written the reader's way.
    await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { timezone: "Europe/Tallinn" },
    });
    const page = async (lang: string) =>
      (await publicGet(t2.body.public_url, { Accept: "text/html", "Accept-Language": lang })).text();
    const local = async (lang: string) => (await page(lang)).split('class="window">')[1].split("</p>")[0];
    // 08:00Z–12:00Z on 3 June 2030 is 11:00–15:00 in Tallinn (summer time, UTC+3).
    expect(await local("en")).toMatch(/Jun 3, 11:00\sAM GMT\+3 – Jun 3, 3:00\sPM GMT\+3/);
    expect(await local("fi")).toMatch(/^Aikaikkuna: 3\.6\..* 11\.00 UTC\+3 – 3\.6\..* 15\.00 UTC\+3/);
    // The page's own words are the reader's language too.
    const fi = await page("fi-FI");
    expect(fi).toMatch(/<html lang="fi"[ >]/);
    expect(fi).toContain("<h1>Toimituksen seuranta</h1>");
    expect(fi).toContain("Odottaa kuljettajaa");
    expect(fi).not.toContain("Waiting for a driver");
    expect(await page("ru")).toContain("Ожидает водителя");
    expectStatus(await call(`/trackers/${t2.body.id}/`, { method: "DELETE", token: acc.admin.token }), 204);
    expect((await publicGet(t2.body.public_url)).status).toBe(404);
  });
});
