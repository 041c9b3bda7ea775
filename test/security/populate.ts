import { expect } from "vitest";
import { uuidText } from "../../src/db/uuid-bytes";
import { newFileUpload, uploadFile } from "../files/helpers";
import { addUser, call, expectStatus, newAccount, type TestAccount } from "../helpers";
import { stored } from "../stored";
import { sampleTask } from "../tasks/helpers";

/** Account A with one object of every kind, made through the API. */
export async function populated() {
  return populate(await newAccount("Victim"));
}

/** One object of every kind in `a`, made through the API by its admin; `ids` by collection. */
export async function populate(a: TestAccount) {
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
  const event = await stored
    .prepare(`SELECT ${uuidText("id")} AS id FROM events WHERE account_id = unhex(?, '-') LIMIT 1`)
    .bind(a.account.id)
    .first<{ id: string }>();
  const delivery = await stored
    .prepare(
      `SELECT ${uuidText("event_id")} AS id FROM webhook_deliveries WHERE webhook_id = unhex(?, '-') LIMIT 1`,
    )
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
export function bodyFor(b: TestAccount, collection: string, method: string): unknown {
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
