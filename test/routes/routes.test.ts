import { describe, expect, it } from "vitest";
import { addUser, call, expectStatus, newAccount, type TestAccount } from "../helpers";

let n = 0;
const ext = () => `r-${Date.now()}-${n++}-${crypto.randomUUID().slice(0, 6)}`;

async function newRoute(acc: TestAccount, body: Record<string, unknown> = {}) {
  const r = await call("/routes/", { token: acc.admin.token, body: { name: "North", ...body } });
  expectStatus(r, 201);
  return r.body;
}
async function taskOn(acc: TestAccount, route: { url: string } | null, extra: Record<string, unknown> = {}) {
  const r = await call("/tasks/", {
    token: acc.admin.token,
    body: {
      account: acc.account.url,
      category: "drop_off",
      address: { raw_address: "Tallinn" },
      route: route?.url ?? null,
      ...extra,
    },
  });
  expectStatus(r, 201);
  return r.body;
}
const act = (acc: TestAccount, route: { id: string }, action: string) =>
  call(`/routes/${route.id}/${action}/`, { method: "POST", token: acc.admin.token });

describe("/routes/ (contract §16)", () => {
  it("creates a draft route with the assignee's depots; tasks join by route and position", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const roles = await call("/account_roles/?page_size=100", { token: acc.admin.token });
    const role = roles.body.results.find((x: any) => x.user === worker.user);
    await call(`/account_roles/${role.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { start_address: { raw_address: "Tartu" } },
    });
    const route = await newRoute(acc, { assignee: worker.user, date: "2026-03-02" });
    expect(route).toMatchObject({
      state: "draft",
      objective: "distance",
      date: "2026-03-02",
      tasks: [],
      end_address: null,
    });
    expect(route.start_address.raw_address).toBe("Tartu");
    const b = await taskOn(acc, route, { position: 2 });
    const a = await taskOn(acc, route, { position: 1 });
    const read = await call(`/routes/${route.id}/`, { token: acc.admin.token });
    expect(read.body.tasks).toEqual([a.url, b.url]);
    const expanded = await call(`/routes/${route.id}/?expand=tasks`, { token: acc.admin.token });
    expect(expanded.body.tasks.map((t: any) => t.id)).toEqual([a.id, b.id]);
    const filtered = await call(`/tasks/?route=${route.id}`, { token: acc.admin.token });
    expect(filtered.body.results.map((t: any) => t.id).sort()).toEqual([a.id, b.id].sort());
    const withRoute = await call(`/tasks/${a.id}/?expand=routes`, { token: acc.admin.token });
    expect(withRoute.body.routes).toMatchObject([{ id: route.id, name: "North", state: "draft" }]);
    // The update command's task_data.route moves a task off the route.
    const cmd = await call("/task_commands/", {
      token: acc.admin.token,
      body: {
        task: b.url,
        external_id: ext(),
        time: new Date().toISOString(),
        action: "update",
        task_data: { route: null },
      },
    });
    expect(cmd.body.state).toBe("accepted");
    expect((await call(`/routes/${route.id}/`, { token: acc.admin.token })).body.tasks).toEqual([a.url]);
  });

  it("moves between states only as the table says; every other move names the state and the action", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const moves: Record<string, Record<string, string | null>> = {
      draft: { activate: "active", archive: "archived", draft: null },
      active: { activate: null, archive: "archived", draft: "draft" },
      archived: { activate: null, archive: null, draft: "draft" },
    };
    for (const [from, actions] of Object.entries(moves)) {
      for (const [action, to] of Object.entries(actions)) {
        const route = await newRoute(acc, { assignee: worker.user });
        await taskOn(acc, route);
        if (from === "active") expectStatus(await act(acc, route, "activate"), 200);
        if (from === "archived") expectStatus(await act(acc, route, "archive"), 200);
        const r = await act(acc, route, action);
        if (to) {
          expectStatus(r, 200);
          expect(r.body.state, `${from} ${action}`).toBe(to);
        } else {
          expectStatus(r, 400);
          expect(r.body).toEqual({ non_field_errors: [`Cannot ${action} a route in state "${from}".`] });
        }
      }
    }
  });

  it("activation needs an assignee and a task, and assigns the waiting tasks through commands", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const empty = await newRoute(acc, { assignee: worker.user });
    expectStatus(await act(acc, empty, "activate"), 400);
    const nobody = await newRoute(acc);
    await taskOn(acc, nobody);
    expectStatus(await act(acc, nobody, "activate"), 400);
    const route = await newRoute(acc, { assignee: worker.user });
    const t1 = await taskOn(acc, route);
    const t2 = await taskOn(acc, route);
    const r = await act(acc, route, "activate");
    expectStatus(r, 200);
    for (const t of [t1, t2]) {
      const read = await call(`/tasks/${t.id}/`, { token: acc.admin.token });
      expect(read.body).toMatchObject({ state: "assigned", assignee: worker.user });
    }
    const cmds = await call(`/task_commands/?task=${t1.id}`, { token: acc.admin.token });
    expect(cmds.body.results.map((c: any) => [c.action, c.state])).toContainEqual(["assign", "accepted"]);
  });

  it("an archived route is read-only and takes no tasks; other accounts' routes do not exist", async () => {
    const acc = await newAccount();
    const route = await newRoute(acc);
    await act(acc, route, "archive");
    const patch = await call(`/routes/${route.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { name: "x" },
    });
    expectStatus(patch, 400);
    const join = await call("/tasks/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        category: "drop_off",
        address: { raw_address: "Tallinn" },
        route: route.url,
      },
    });
    expectStatus(join, 400);
    expect(join.body.route[0]).toMatch(/archived/);
    const other = await newAccount();
    const theirs = await newRoute(other);
    const t = await call("/tasks/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        category: "drop_off",
        address: { raw_address: "Tallinn" },
        route: theirs.url,
      },
    });
    expectStatus(t, 400);
    expect(t.body.route).toEqual(["Invalid hyperlink - Object does not exist."]);
    expectStatus(await call(`/routes/${theirs.id}/`, { token: acc.admin.token }), 404);
    expectStatus(
      await call(`/routes/${theirs.id}/activate/`, { method: "POST", token: acc.admin.token }),
      404,
    );
  });

  it("refuses bad input with field errors", async () => {
    const acc = await newAccount();
    for (const body of [
      { date: "2026-13-01" },
      { objective: "speed" },
      { assignee: "nope" },
      { metafields: { x: 1 } },
    ]) {
      expectStatus(await call("/routes/", { token: acc.admin.token, body }), 400);
    }
  });
});
