import { describe, expect, it } from "vitest";
import { addUser, call, expectStatus, newAccount, signIn } from "../helpers";
import { api, createTask, sampleTask } from "../tasks/helpers";

// Contract §24: every request runs in a D1 session and answers its bookmark; a request that
// sends it back reads at least what that answer had written. The tests' service exposes each
// request's sequential D1 round trips (EXPOSE_D1_ROUND_TRIPS, vitest.config.ts): the edge pays
// one per sequential call, so these counts are what a far region feels.

const trips = (r: { headers: Headers }) => Number(r.headers.get("X-D1-Round-Trips"));
const bookmark = (r: { headers: Headers }) => r.headers.get("X-D1-Bookmark");
const command = (task: { url: string }, action: string, extra: Record<string, unknown> = {}) => ({
  task: task.url,
  external_id: crypto.randomUUID(),
  time: new Date().toISOString(),
  action,
  ...extra,
});

describe("D1 sessions: X-D1-Bookmark (contract §24)", () => {
  it("every answer carries the session's bookmark; one sent back is read from, later ones never go back", async () => {
    const acc = await newAccount();
    const task = await createTask(acc);
    const worker = await addUser(acc, "worker");
    const read = await api(`/tasks/${task.id}/`, { token: acc.admin.token });
    expectStatus(read, 200);
    const b0 = bookmark(read);
    // Tagged with the database that wrote it: the account's shard (issue 45 item 8).
    expect(b0).toMatch(/^SHARD_[01]:[0-9a-f]{8}(-[0-9a-f]+)+$/);
    // A command's write is made by the task's Durable Object: the answer's bookmark covers it.
    const cmd = await api("/task_commands/", {
      token: acc.admin.token,
      body: command(task, "assign", { assignee: worker.user }),
    });
    expectStatus(cmd, 201);
    expect(cmd.body.state).toBe("accepted");
    const b1 = bookmark(cmd)!;
    expect(b1 > b0!).toBe(true);
    const after = await call(`/tasks/${task.id}/`, {
      token: acc.admin.token,
      headers: { "X-D1-Bookmark": b1 },
    });
    expectStatus(after, 200);
    expect(after.body).toMatchObject({ state: "assigned", assignee: worker.user });
    expect(bookmark(after)! >= b1).toBe(true);
    // An empty header (what `getBookmark() ?? ""` echoes) is no bookmark.
    expectStatus(await call("/tasks/", { token: acc.admin.token, headers: { "X-D1-Bookmark": "" } }), 200);
  });

  it("a header that is no bookmark of this service is ignored, never refused nor echoed (issue 45 item 8)", async () => {
    const acc = await newAccount();
    const own = bookmark(await api("/tasks/", { token: acc.admin.token }))!;
    const [tag, raw] = own.split(":");
    for (const garbage of [
      "not a bookmark!",
      "0A919",
      "0000002c-00000007",
      raw, // a bare D1 bookmark: no database named
      `${tag}:zz`,
      `SHARD_9:${raw}`, // a database this deployment does not have
      `${tag}:${"0".repeat(8)}-${"f".repeat(300)}`,
    ]) {
      const r = await call("/tasks/", { token: acc.admin.token, headers: { "X-D1-Bookmark": garbage } });
      expectStatus(r, 200);
      expect(bookmark(r)).toMatch(new RegExp(`^${tag}:[0-9a-f]{8}(-[0-9a-f]+)+$`));
      expect(bookmark(r)).not.toContain(garbage);
    }
    // Anonymous and outside the API alike: no 400 for any of them.
    for (const path of ["/", "/health/", "/openapi.json"]) {
      expectStatus(await call(path, { headers: { "X-D1-Bookmark": "0A919" } }), 200);
    }
  });

  it("another database's bookmark is not read from nor echoed; one's own still reads its writes", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const fromA = bookmark(await api("/tasks/", { token: a.admin.token }))!;
    const fromB = bookmark(await api("/tasks/", { token: b.admin.token }))!;
    const [tagB] = fromB.split(":");
    // The other shard (or, for an account on the same shard as A, A's bookmark under the other
    // shard's name): far ahead, so were it read on B's database B's answer would carry it.
    const foreign = tagB === "SHARD_0" ? "SHARD_1" : "SHARD_0";
    const ahead = `${foreign}:ffffffff-ffffffff-ffffffff-${"f".repeat(32)}`;
    const moved = `${foreign}:${fromA.split(":")[1]}`;
    const r = await call("/tasks/", {
      token: b.admin.token,
      headers: { "X-D1-Bookmark": `${ahead}, ${moved}` },
    });
    expectStatus(r, 200);
    expect(bookmark(r)!.startsWith(`${tagB}:`)).toBe(true);
    expect(bookmark(r)).not.toContain(foreign);
    expect(bookmark(r)).not.toContain("ffffffff");
    // B's own bookmark, sent alongside another database's: B reads its own write.
    const task = await createTask(b);
    const patched = await api(`/tasks/${task.id}/`, {
      method: "PATCH",
      token: b.admin.token,
      body: { description: "Ring twice" },
    });
    expectStatus(patched, 200);
    const mine = bookmark(patched)!;
    expect(mine.startsWith(`${tagB}:`)).toBe(true);
    const read = await call(`/tasks/${task.id}/`, {
      token: b.admin.token,
      headers: { "X-D1-Bookmark": `${ahead}, ${mine}` },
    });
    expectStatus(read, 200);
    expect(read.body.description).toBe("Ring twice");
    expect(bookmark(read)! >= mine).toBe(true);
  });

  it("a request with nothing to read from the database echoes nothing it was sent", async () => {
    const sent = `DB:${"0".repeat(8)}-${"0".repeat(8)}-${"0".repeat(8)}-${"a".repeat(32)}`;
    const r = await call("/openapi.json", { headers: { "X-D1-Bookmark": sent } });
    expectStatus(r, 200);
    expect(r.headers.get("X-D1-Bookmark")).toBeNull();
  });

  it("browsers may send it and read it (CORS)", async () => {
    const acc = await newAccount();
    const r = await call("/tasks/", { token: acc.admin.token, headers: { Origin: "https://app.example" } });
    expectStatus(r, 200);
    const pre = await call("/tasks/", {
      method: "OPTIONS",
      headers: {
        Origin: "https://app.example",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "x-d1-bookmark",
      },
    });
    // CORS_ORIGINS is empty in the tests: the header lists are what an allowed origin would get.
    const { CORS_OPTIONS } = await import("../../src/http/middleware");
    expect(CORS_OPTIONS.allowHeaders).toContain("X-D1-Bookmark");
    expect(CORS_OPTIONS.exposeHeaders).toContain("X-D1-Bookmark");
    expect(pre.status).toBeLessThan(500);
  });
});

describe("sequential D1 round trips per request (contract §24)", () => {
  it("a GET of one object 1, a list page 1, a single command 1 after its object, a task create 2", async () => {
    const acc = await newAccount();
    const task = await createTask(acc);
    const worker = await addUser(acc, "worker");
    // The token's first request in this isolate checks it alone; from then on the check rides
    // on the request's first D1 call.
    expectStatus(await api("/users/", { token: acc.admin.token }), 200);

    const get = await api(`/tasks/${task.id}/`, { token: acc.admin.token });
    expectStatus(get, 200);
    expect(trips(get)).toBe(1);

    for (const path of [
      "/tasks/?page_size=1",
      "/users/",
      "/orders/",
      "/task_commands/",
      "/events/",
      "/webhooks/",
    ]) {
      const page = await api(path, { token: acc.admin.token });
      expectStatus(page, 200);
      expect({ path, trips: trips(page) }).toEqual({ path, trips: 1 });
    }
    const more = await api("/tasks/?page_size=1", { token: acc.admin.token });
    await createTask(acc);
    const withNext = await api("/tasks/?page_size=1", { token: acc.admin.token });
    expect(withNext.body.next).toBeTruthy();
    expect(trips(more)).toBe(1);
    expect(trips(withNext)).toBe(1);

    // A command to a task whose object knows the task: the object's one batch, nothing else.
    expectStatus(
      await api("/task_commands/", {
        token: acc.admin.token,
        body: command(task, "assign", { assignee: worker.user }),
      }),
      201,
    );
    const single = await api("/task_commands/", {
      token: acc.admin.token,
      body: command(task, "update", { task_data: { description: "Gate code 1234" } }),
    });
    expectStatus(single, 201);
    expect(single.body.state).toBe("accepted");
    expect(trips(single)).toBe(1);
    // An assigned task's ETA (contract §28) is read beside it: still one round trip.
    const assigned = await api(`/tasks/${task.id}/`, { token: acc.admin.token });
    expect([assigned.body.state, trips(assigned)]).toEqual(["assigned", 1]);
    const board = await api("/tasks/?page_size=5", { token: acc.admin.token });
    expect(board.body.results.some((t: { state: string }) => t.state === "assigned")).toBe(true);
    expect(trips(board)).toBe(1);

    const created = await api("/tasks/", { token: acc.admin.token, body: sampleTask(acc) });
    expectStatus(created, 201);
    expect(trips(created)).toBeLessThanOrEqual(2);
  });
});

describe("round trips of an account with webhooks", () => {
  it("the relay's work after the answer is not the request's: a command 1, a task create 2", async () => {
    const acc = await newAccount();
    const hook = await api("/webhooks/", {
      token: acc.admin.token,
      body: { url: "https://hooks.example.com/in" },
    });
    expectStatus(hook, 201);
    const task = await createTask(acc);
    expectStatus(await api("/users/", { token: acc.admin.token }), 200);
    const body = () => command(task, "update", { task_data: { description: "Back door" } });
    expectStatus(await api("/task_commands/", { token: acc.admin.token, body: body() }), 201);
    const single = await api("/task_commands/", { token: acc.admin.token, body: body() });
    expectStatus(single, 201);
    expect(trips(single)).toBe(1);
    const created = await api("/tasks/", { token: acc.admin.token, body: sampleTask(acc) });
    expectStatus(created, 201);
    expect(trips(created)).toBeLessThanOrEqual(2);
  });
});

describe("a read that starts before its token is settled", () => {
  it("a token revoked since this isolate last saw it is 401, not the page", async () => {
    const acc = await newAccount();
    await createTask(acc);
    const session = await signIn(acc.admin.email, acc.admin.password);
    expectStatus(await api("/tasks/", { token: session.token }), 200);
    expectStatus(await call("/logout/", { method: "POST", token: session.token }), 204);
    const r = await api("/tasks/", { token: session.token });
    expectStatus(r, 401);
    expect(r.body.results).toBeUndefined();
    expect(r.headers.get("WWW-Authenticate")).toBeTruthy();
  });

  it("a role changed since is answered for the role the token has now", async () => {
    const acc = await newAccount();
    await createTask(acc);
    const manager = await addUser(acc, "manager");
    const before = await api("/tasks/", { token: manager.token });
    expectStatus(before, 200);
    expect(before.body.results).toHaveLength(1);
    const roles = await api("/account_roles/?page_size=500", { token: acc.admin.token });
    const role = roles.body.results.find((r: any) => r.user === manager.user);
    const remaining = (r: { headers: Headers }) =>
      Number(/;r=(\d+)/.exec(r.headers.get("RateLimit") ?? "")?.[1]);
    // The rate limit counts in one-second windows aligned to the clock's seconds
    // (durable-objects/rate-limiter), so the two requests measured start at the top of a fresh
    // window; on a machine so loaded that they still span two, the role flips back and the
    // measure is taken again.
    let measured = false;
    for (let attempt = 0; attempt < 4 && !measured; attempt++) {
      const now = attempt % 2 === 0 ? "worker" : "manager";
      expectStatus(
        await api(`/account_roles/${role.id}/`, {
          method: "PATCH",
          token: acc.admin.token,
          body: { role: now },
        }),
        200,
      );
      await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
      // A worker sees only the tasks assigned to it (none); a manager sees the task.
      const after = await api("/tasks/", { token: manager.token });
      expectStatus(after, 200);
      expect(after.body.results).toHaveLength(now === "worker" ? 0 : 1);
      const next = await api("/tasks/", { token: manager.token });
      const quota = Number(/;q=(\d+)/.exec(after.headers.get("RateLimit-Policy") ?? "")?.[1]);
      expect(quota).toBeGreaterThan(2);
      expect(remaining(after)).toBe(quota - 1);
      if (remaining(next) === quota - 1) continue; // `next` began the following window
      // The request ran twice inside but counted once against the token's rate limit.
      expect(remaining(next)).toBe(quota - 2);
      measured = true;
    }
    expect(measured).toBe(true);
  });
});
