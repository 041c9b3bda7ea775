import { describe, expect, it } from "vitest";
import { call, expectStatus, newAccount, signIn } from "../helpers";
import { stored } from "../stored";
import { sampleTask } from "../tasks/helpers";
import { bodyFor, populated } from "./populate";

describe("another account's objects and users (cross-account matrix)", () => {
  it("every endpoint with an id answers another account's object exactly as a missing one, and changes nothing", async () => {
    const { a, ids } = await populated();
    const b = await newAccount("Attacker");
    const spec = await call("/openapi.json");
    let walked = 0;
    for (const [path, ops] of Object.entries<Record<string, unknown>>(spec.body.paths)) {
      if (!path.includes("{id}") || path.startsWith("/files/")) continue;
      const collection = path.split("/")[1];
      for (const method of Object.keys(ops)) {
        const fill = (id: string, delivery: string) =>
          path.replace("{id}", id).replace("{delivery_id}", delivery);
        const opts = {
          method: method.toUpperCase(),
          token: b.admin.token,
          body: bodyFor(b, collection, method),
        };
        const theirs = await call(fill(ids[collection], ids.delivery), opts);
        const missing = await call(fill(crypto.randomUUID(), crypto.randomUUID()), opts);
        const where = `${method.toUpperCase()} ${path}`;
        expect(theirs.status, `${where}: ${theirs.text}`).toBe(404);
        expect({ where, body: theirs.body }).toEqual({ where, body: missing.body });
        walked++;
      }
    }
    expect(walked).toBeGreaterThanOrEqual(30);
    // Nothing of A's changed: every object still reads back for A.
    for (const c of [
      "tasks",
      "orders",
      "contact_addresses",
      "metafields",
      "clients",
      "routes",
      "trackers",
      "sms",
      "notification_templates",
      "forms",
      "form_fields",
      "form_responses",
      "recurrences",
      "documents",
      "signatures",
      "webhooks",
      "users",
      "account_roles",
    ]) {
      expectStatus(await call(`/${c}/${ids[c]}/`, { token: a.admin.token }), 200);
    }
    const acc = await call(`/accounts/${a.account.id}/`, { token: a.admin.token });
    expect(acc.body.name).toBe("Victim");
    expectStatus(await call("/users/me/", { token: a.admin.token }), 200);
  });

  it("another account's objects in a body are 'does not exist' field errors, and nothing is written", async () => {
    const { worker, urls, ids } = await populated();
    const b = await newAccount("Attacker");
    const t = b.admin.token;
    const before = await stored
      .prepare("SELECT COUNT(*) AS n FROM tasks WHERE account_id = ?")
      .bind(b.account.id)
      .first<any>();
    const task = await call("/tasks/", { token: t, body: sampleTask(b, { assignee: worker.user }) });
    expectStatus(task, 400);
    expect(task.body.assignee[0]).toMatch(/does not exist/);
    const viaCa = await call("/tasks/", { token: t, body: { ...sampleTask(b), contact_address: urls.ca } });
    expectStatus(viaCa, 400);
    const cmd = await call("/task_commands/", {
      token: t,
      body: {
        task: urls.task,
        external_id: `x-${crypto.randomUUID()}`,
        time: new Date().toISOString(),
        action: "cancel",
      },
    });
    expectStatus(cmd, 400);
    expect(cmd.body.task).toBeTruthy();
    const doc = await call("/documents/", {
      token: t,
      body: { account: b.account.url, task: urls.task, file_upload: urls.fu },
    });
    expectStatus(doc, 400);
    const role = await call("/account_roles/", { token: t, body: { user: worker.user, role: "worker" } });
    expectStatus(role, 400);
    const after = await stored
      .prepare("SELECT COUNT(*) AS n FROM tasks WHERE account_id = ?")
      .bind(b.account.id)
      .first<any>();
    expect(after.n).toBe(before.n);
    // A's users are not listed in B.
    const users = await call("/users/", { token: t });
    expect(users.body.results.map((u: any) => u.id)).not.toContain(ids.users);
  });

  it("the takeover: inviting another account's admin gives no power over their credentials", async () => {
    const { a } = await populated();
    const b = await newAccount("Attacker");
    const invite = await call("/users/", {
      token: b.admin.token,
      body: { email: a.admin.email, role: "worker", password: "chosen by B 123" },
    });
    expectStatus(invite, 201);
    // The password B chose does not apply to A's admin.
    expectStatus(
      await call("/authenticate/", { body: { username: a.admin.email, password: "chosen by B 123" } }),
      400,
    );
    for (const body of [
      { password: "taken over!!" },
      { email: "b-owns@example.test" },
      { is_active: false },
    ]) {
      expectStatus(
        await call(`/users/${a.admin.userId}/`, { method: "PATCH", token: b.admin.token, body }),
        404,
      );
    }
    // Even once A's admin accepts, B may not touch their credentials.
    const roles = await call("/account_roles/", { token: b.admin.token });
    const pending = roles.body.results.find((r: any) => r.user === a.admin.user);
    expectStatus(
      await call(`/account_roles/${pending.id}/accept/`, { method: "POST", token: a.admin.token }),
      200,
    );
    for (const body of [
      { password: "taken over!!" },
      { email: "b-owns@example.test" },
      { is_active: false },
    ]) {
      expectStatus(
        await call(`/users/${a.admin.userId}/`, { method: "PATCH", token: b.admin.token, body }),
        403,
      );
    }
    await signIn(a.admin.email, a.admin.password);
  });

  it("workers see of other users only id, url, name and role (and a null position, contract §28)", async () => {
    const { a, worker } = await populated();
    const r = await call("/users/", { token: worker.token });
    expectStatus(r, 200);
    const admin = r.body.results.find((u: any) => u.id === a.admin.userId);
    expect(Object.keys(admin).sort()).toEqual(["id", "name", "position", "role", "url"]);
    expect(admin.position).toBeNull();
    const self = r.body.results.find((u: any) => u.id === worker.userId);
    expect(self.email).toBe(worker.email);
    const one = await call(`/users/${a.admin.userId}/`, { token: worker.token });
    expect(one.body.email).toBeUndefined();
  });
});
