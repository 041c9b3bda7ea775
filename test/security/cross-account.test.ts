import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { newFileUpload, uploadFile } from "../files/helpers";
import { addUser, call, expectStatus, newAccount, signIn, type TestAccount } from "../helpers";
import { sampleTask } from "../tasks/helpers";

/** Account A with one object of every kind, made through the API. */
async function populated() {
  const a = await newAccount("Victim");
  const t = a.admin.token;
  const worker = await addUser(a, "worker");
  const task = await call("/tasks/", { token: t, body: sampleTask(a, { assignee: worker.user }) });
  expectStatus(task, 201);
  const order = await call("/orders/", {
    token: t,
    body: { account: a.account.url, external_id: `o-${crypto.randomUUID()}` },
  });
  expectStatus(order, 201);
  const ca = await call("/contact_addresses/", {
    token: t,
    body: { external_id: `ca-${crypto.randomUUID()}`, address: { raw_address: "Tallinn" } },
  });
  expectStatus(ca, 201);
  const fu = await uploadFile(t, "a.txt", "text/plain", new TextEncoder().encode("proof"));
  const doc = await call("/documents/", {
    token: t,
    body: { account: a.account.url, task: task.body.url, file_upload: fu.url },
  });
  expectStatus(doc, 201);
  const fu2 = await uploadFile(t, "s.txt", "text/plain", new TextEncoder().encode("sig"));
  const sig = await call("/signatures/", {
    token: t,
    body: { account: a.account.url, task: task.body.url, file_upload: fu2.url },
  });
  expectStatus(sig, 201);
  const spare = await newFileUpload(t, "spare.txt", "text/plain");
  const hook = await call("/webhooks/", { token: t, body: { url: "https://example.com/hook" } });
  expectStatus(hook, 201);
  const cmd = await call("/task_commands/", {
    token: t,
    body: {
      task: task.body.url,
      external_id: `c-${crypto.randomUUID()}`,
      time: new Date().toISOString(),
      action: "update",
      task_data: { position: 1 },
    },
  });
  expect(cmd.status).toBeLessThan(300);
  const metafield = await call("/metafields/", {
    token: t,
    body: { key: "door", applies_to: "tasks", value_type: "string" },
  });
  expectStatus(metafield, 201);
  const client = await call("/clients/", { token: t, body: { name: "Victim's customer" } });
  expectStatus(client, 201);
  const route = await call("/routes/", { token: t, body: { name: "Victim's route" } });
  expectStatus(route, 201);
  const tracker = await call("/trackers/", { token: t, body: { tasks: [task.body.url] } });
  expectStatus(tracker, 201);
  const text = await call("/sms/", { token: t, body: { to: "+358401234567", message: "Victim's message" } });
  expectStatus(text, 201);
  const notification = await call("/notification_templates/", {
    token: t,
    body: { event: "task_assigned", channel: "sms", body: "Victim's template" },
  });
  expectStatus(notification, 201);
  const form = await call("/forms/", { token: t, body: { name: "Checklist" } });
  expectStatus(form, 201);
  const field = await call("/form_fields/", {
    token: t,
    body: { form: form.body.url, key: "ok", field_type: "boolean" },
  });
  expectStatus(field, 201);
  const response = await call("/form_responses/", {
    token: t,
    body: { form: form.body.url, task: task.body.url },
  });
  expectStatus(response, 201);
  const taskExport = await call("/task_exports/", { token: t, body: { account: a.account.url } });
  expectStatus(taskExport, 202);
  const caExport = await call("/contact_address_exports/", { token: t, body: { account: a.account.url } });
  expectStatus(caExport, 202);
  const importFile = await uploadFile(t, "i.csv", "text/csv", new TextEncoder().encode("category\r\n"));
  const dataImport = await call("/imports/", { token: t, body: { kind: "tasks", file: importFile.url } });
  expectStatus(dataImport, 202);
  const recurrence = await call("/recurrences/", {
    token: t,
    body: { rule: "FREQ=WEEKLY", start: "2030-01-07T09:00:00", kind: "task", template: sampleTask(a) },
  });
  expectStatus(recurrence, 201);
  const sessions = await call("/session_tokens/", { token: t });
  const roles = await call("/account_roles/", { token: t });
  const event = await env.DB.prepare("SELECT id FROM events WHERE account_id = ? LIMIT 1")
    .bind(a.account.id)
    .first<{ id: string }>();
  const delivery = await env.DB.prepare("SELECT id FROM webhook_deliveries WHERE webhook_id = ? LIMIT 1")
    .bind(hook.body.id)
    .first<{ id: string }>();
  const ids: Record<string, string> = {
    session_tokens: sessions.body.results[0].id,
    accounts: a.account.id,
    users: worker.userId,
    account_roles: roles.body.results.find((r: any) => r.user === worker.user).id,
    tasks: task.body.id,
    orders: order.body.id,
    contact_addresses: ca.body.id,
    task_commands: (Array.isArray(cmd.body) ? cmd.body[0] : cmd.body).id,
    file_uploads: spare.id,
    documents: doc.body.id,
    signatures: sig.body.id,
    webhooks: hook.body.id,
    metafields: metafield.body.id,
    clients: client.body.id,
    routes: route.body.id,
    route_optimizations: crypto.randomUUID(),
    trackers: tracker.body.id,
    sms: text.body.id,
    notification_templates: notification.body.id,
    forms: form.body.id,
    form_fields: field.body.id,
    form_responses: response.body.id,
    recurrences: recurrence.body.id,
    events: event!.id,
    delivery: delivery?.id ?? crypto.randomUUID(),
    task_exports: taskExport.body.id,
    contact_address_exports: caExport.body.id,
    imports: dataImport.body.id,
  };
  return { a, worker, ids, urls: { task: task.body.url, ca: ca.body.url, fu: fu.url, spare: spare.url } };
}

/** Bodies that are valid in themselves, so only the object's account decides the answer. */
function bodyFor(b: TestAccount, collection: string, method: string): unknown {
  if (method === "put" && collection === "tasks") return sampleTask(b);
  if (method === "put" && collection === "contact_addresses") return { address: { raw_address: "Tartu" } };
  if (method === "put" && collection === "webhooks") return { url: "https://example.com/other" };
  if (method === "put" && collection === "metafields")
    return { key: "gate", applies_to: "tasks", value_type: "text" };
  if (method === "put" && collection === "forms") return { name: "taken" };
  if (method === "put" && collection === "clients") return { name: "taken" };
  if (method === "put" && collection === "routes") return { name: "taken" };
  if (method === "put" && collection === "notification_templates")
    return { event: "task_failed", channel: "sms", body: "taken" };
  if (method === "put" && collection === "form_fields") return { key: "taken", field_type: "text" };
  if (method === "put" && collection === "form_responses") return { data: {} };
  if (method === "put" && collection === "recurrences")
    return { rule: "FREQ=DAILY", start: "2030-01-07T09:00:00", kind: "task", template: sampleTask(b) };
  if (method === "patch" && collection === "users") return { password: "taken over by B" };
  if (method === "patch" && collection === "accounts") return { name: "owned" };
  return method === "get" || method === "delete" ? undefined : {};
}

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
    const before = await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE account_id = ?")
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
    const after = await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE account_id = ?")
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

  it("workers see of other users only id, url, name and role", async () => {
    const { a, worker } = await populated();
    const r = await call("/users/", { token: worker.token });
    expectStatus(r, 200);
    const admin = r.body.results.find((u: any) => u.id === a.admin.userId);
    expect(Object.keys(admin).sort()).toEqual(["id", "name", "role", "url"]);
    const self = r.body.results.find((u: any) => u.id === worker.userId);
    expect(self.email).toBe(worker.email);
    const one = await call(`/users/${a.admin.userId}/`, { token: worker.token });
    expect(one.body.email).toBeUndefined();
  });
});
