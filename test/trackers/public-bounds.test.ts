import { env, exports } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { lastLocationSql } from "../../src/services/eta";
import type { TaskRow } from "../../src/services/tasks/types";
import { etas } from "../../src/services/trackers/public";
import { addUser, call, expectStatus, newAccount } from "../helpers";
import { scopedTo, stored } from "../stored";

const publicGet = (url: string, init: RequestInit = {}) =>
  exports.default.fetch(
    new Request(url, {
      ...init,
      headers: { "CF-Connecting-IP": `198.51.100.${Math.floor(Math.random() * 200)}`, ...init.headers },
    }),
  );

async function trackedTask(fields: string[]) {
  const acc = await newAccount();
  const task = await call("/tasks/", {
    token: acc.admin.token,
    body: {
      account: acc.account.url,
      category: "drop_off",
      address: {
        raw_address: "Rüütli 1, Tartu",
        location: { type: "Point", coordinates: [26.7219, 58.3806] },
      },
    },
  });
  expectStatus(task, 201);
  const t = await call("/trackers/", {
    token: acc.admin.token,
    body: { tasks: [task.body.url], public_task_fields: fields },
  });
  expectStatus(t, 201);
  return { acc, url: t.body.public_url as string };
}

describe("the public tracking page shows no more than its allowlist, and bounds its work", () => {
  it("the map link names coordinates only when address.location is allowlisted", async () => {
    const html = async (fields: string[]) => await (await publicGet((await trackedTask(fields)).url)).text();
    const none = await html(["state"]);
    expect(none).not.toContain("58.3806");
    expect(none).not.toMatch(/openstreetmap|google\.com\/maps/);
    const byAddress = await html(["state", "address.formatted_address"]);
    expect(byAddress).not.toContain("58.3806");
    expect(byAddress).toContain("https://www.openstreetmap.org/search?query=R%C3%BC%C3%BCtli%201%2C%20Tartu");
    const byPoint = await html(["state", "address.location"]);
    expect(byPoint).toContain("mlat=58.3806&amp;mlon=26.7219");
  });

  it("/t/<token> without its slash is 404 like any unknown path; other methods 405", async () => {
    const { url } = await trackedTask(["state"]);
    expect((await publicGet(url.replace(/\/$/, ""))).status).toBe(404);
    const post = await publicGet(url, { method: "POST" });
    expect(post.status).toBe(405);
    // The page names its own (empty) icon: browsers ask for no /favicon.ico.
    const page = await publicGet(url);
    expect(await page.text()).toContain('<link rel="icon" href="data:,">');
    expect(page.headers.get("Content-Security-Policy")).toContain("img-src 'self' data:");
  });

  it("an ETA behind 250 stops asks OSRM for the legs only (3 requests), and a second view within a minute none", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const server = inject("providers").url;
    const tag = crypto.randomUUID();
    const e = await scopedTo(acc.account.id, { ...env, ROUTING_URL: `${server}/osrm/${tag}` } as Env);
    const now = Date.now();
    const statements = [];
    for (let i = 0; i < 251; i++) {
      const lon = 24.6 + (i % 50) * 0.004;
      const lat = 59.4 + Math.floor(i / 50) * 0.004;
      statements.push(
        stored
          .prepare(
            `INSERT INTO tasks (id, account_id, state, category, description, address, contact, assignee_id, position, created_at, updated_at)
           VALUES (?, ?, 'assigned', 'drop_off', '', ?, '{}', ?, ?, ?, ?)`,
          )
          .bind(
            crypto.randomUUID(),
            acc.account.id,
            JSON.stringify({
              raw_address: `Stop ${i}`,
              location: { type: "Point", coordinates: [lon, lat] },
            }),
            worker.userId,
            i,
            now,
            now,
          ),
      );
    }
    await stored.batch(statements);
    await stored
      .prepare(
        "INSERT INTO task_commands (id, account_id, task_id, external_id, action, time, user_id, state, location, created_at, updated_at) VALUES (unhex(?, '-'), unhex(?, '-'), unhex(?, '-'), ?, 'accept', ?, unhex(?, '-'), 'accepted', ?, ?, ?)",
      )
      .bind(
        crypto.randomUUID(),
        acc.account.id,
        crypto.randomUUID(),
        crypto.randomUUID(),
        now,
        worker.userId,
        '{"type":"Point","coordinates":[24.59,59.39]}',
        now,
        now,
      )
      .run();
    const last = await stored
      .prepare("SELECT * FROM tasks WHERE account_id = ? AND position = 250")
      .bind(acc.account.id)
      .first<TaskRow>();
    const stats = async () =>
      (await (await fetch(`${server}/osrm/${tag}/__stats`)).json()) as { requests: number };
    const first = await etas(e, [last!], now);
    expect(first.get(last!.id)).toHaveProperty("eta");
    // The first 200 stops, then the task after them: 201 legs in runs of 100 points.
    expect((await stats()).requests).toBeLessThanOrEqual(3);
    const again = await etas(e, [last!], now + 30_000);
    expect((await stats()).requests).toBeLessThanOrEqual(3);
    expect((again.get(last!.id) as { eta: number }).eta - (first.get(last!.id) as { eta: number }).eta).toBe(
      30_000,
    );
  });
  it("takes the worker's newest command with a location as the ETA's start", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const now = Date.now();
    const command = (time: number, location: string | null) =>
      stored
        .prepare(
          "INSERT INTO task_commands (id, account_id, task_id, external_id, action, time, user_id, state, location, created_at, updated_at) VALUES (unhex(?, '-'), unhex(?, '-'), unhex(?, '-'), ?, 'complete', ?, unhex(?, '-'), 'accepted', ?, ?, ?)",
        )
        .bind(
          crypto.randomUUID(),
          acc.account.id,
          crypto.randomUUID(),
          crypto.randomUUID(),
          time,
          worker.userId,
          location,
          now,
          now,
        );
    const at = (lon: number) => JSON.stringify({ type: "Point", coordinates: [lon, 59.4] });
    // Sent in another order than made: the newest by `time` counts, and one without a location does not.
    await stored.batch([command(now - 1000, at(24.2)), command(now - 3000, at(24.1)), command(now, null)]);
    const row = await stored
      .prepare(lastLocationSql("?"))
      .bind(worker.userId, acc.account.id)
      .first<{ location: string }>();
    expect(JSON.parse(row!.location).coordinates).toEqual([24.2, 59.4]);
  });
});
