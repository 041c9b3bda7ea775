import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  deliverNotification,
  relayNotifications,
  sweepNotifications,
} from "../../src/services/notifications/send";
import { insertTask } from "../factories";
import { eventually } from "../files/helpers";
import { addUser, call, expectStatus, newAccount, type TestAccount } from "../helpers";
import { pdfPages } from "../pdf";
import { stored } from "../stored";

const TO = "+358401234567";
const TO2 = "+358409999999";

const template = (acc: TestAccount, body: Record<string, unknown>) =>
  call("/notification_templates/", { token: acc.admin.token, body });

async function command(acc: TestAccount, task: string, action: string, extra: Record<string, unknown> = {}) {
  const r = await call("/task_commands/", {
    token: acc.admin.token,
    body: { task, external_id: `n-${crypto.randomUUID()}`, time: new Date().toISOString(), action, ...extra },
  });
  expectStatus(r, 201);
  expect(r.body.state, r.body.error_message).toBe("accepted");
}

const sends = (taskId: string) =>
  stored
    .prepare("SELECT * FROM notification_sends WHERE task_id = ? ORDER BY recipient")
    .bind(taskId)
    .all<any>()
    .then((r) => r.results);

async function smsOf(acc: TestAccount, taskId: string) {
  const r = await call("/sms/?page_size=500", { token: acc.admin.token });
  return (r.body.results as any[]).filter((s) => s.task?.includes(taskId));
}

async function outbox(acc: TestAccount) {
  const r = await call("/outbox/?page_size=500", { token: acc.admin.token });
  expectStatus(r, 200);
  return (r.body.results as any[]).filter((m) => m.kind === "notification");
}

describe("/notification_templates/ (contract §18)", () => {
  it("creates, lists, changes and deletes templates; the account's language by default", async () => {
    const acc = await newAccount();
    const r = await template(acc, {
      event: "task_assigned",
      channel: "sms",
      body: "Hello {{contact.name}}, follow your delivery: {{tracker_url}}",
    });
    expectStatus(r, 201);
    expect(r.body).toMatchObject({
      event: "task_assigned",
      channel: "sms",
      language: "en",
      subject: "",
      is_active: true,
      pod_show_images: null,
      pod_show_description: null,
      account: acc.account.url,
      created_by: acc.admin.user,
    });
    expect(r.body.url).toBe(`https://api.test/notification_templates/${r.body.id}/`);
    const patched = await call(`/notification_templates/${r.body.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { is_active: false, language: "fi", pod_show_images: false },
    });
    expectStatus(patched, 200);
    expect(patched.body).toMatchObject({ is_active: false, language: "fi", pod_show_images: false });
    const list = await call("/notification_templates/?is_active=false", { token: acc.admin.token });
    expect(list.body.results.map((t: any) => t.id)).toEqual([r.body.id]);
    expect(
      (await call("/notification_templates/?is_active=true", { token: acc.admin.token })).body.results,
    ).toEqual([]);
    expectStatus(
      await call(`/notification_templates/${r.body.id}/`, { method: "DELETE", token: acc.admin.token }),
      204,
    );
    expectStatus(await call(`/notification_templates/${r.body.id}/`, { token: acc.admin.token }), 404);
  });

  it("refuses unknown placeholders, bad choices, e-mails without subject and over-long SMS; nothing stored", async () => {
    const acc = await newAccount();
    const bad = await template(acc, {
      event: "task_assigned",
      channel: "sms",
      body: "Hi {{contact.phones}} {{secret}}",
    });
    expectStatus(bad, 400);
    expect(bad.body.body.join(" ")).toContain("{{contact.phones}}");
    expect(bad.body.body.join(" ")).toContain("{{secret}}");
    const choices = await template(acc, { event: "task_started", channel: "fax", language: "xx", body: "x" });
    expectStatus(choices, 400);
    expect(Object.keys(choices.body).sort()).toEqual(["channel", "event", "language"]);
    const noSubject = await template(acc, { event: "task_completed", channel: "email", body: "Done" });
    expectStatus(noSubject, 400);
    expect(noSubject.body.subject).toBeDefined();
    const badSubject = await template(acc, {
      event: "task_completed",
      channel: "email",
      subject: "{{nope}}",
      body: "Done",
    });
    expect(badSubject.body.subject[0]).toContain("{{nope}}");
    expectStatus(
      await template(acc, { event: "task_assigned", channel: "sms", body: "x".repeat(1601) }),
      400,
    );
    expectStatus(await template(acc, { event: "task_assigned", channel: "sms" }), 400);
    expect((await call("/notification_templates/", { token: acc.admin.token })).body.results).toEqual([]);
    // A PATCH is checked against the template it leaves.
    const ok = await template(acc, { event: "task_assigned", channel: "sms", body: "ok" });
    const toEmail = await call(`/notification_templates/${ok.body.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { channel: "email" },
    });
    expectStatus(toEmail, 400);
    expect(
      (await call(`/notification_templates/${ok.body.id}/`, { token: acc.admin.token })).body.channel,
    ).toBe("sms");
  });

  it("workers are refused; another account's template is 404", async () => {
    const acc = await newAccount();
    const other = await newAccount();
    const worker = await addUser(acc, "worker");
    expectStatus(await call("/notification_templates/", { token: worker.token }), 403);
    const theirs = await template(other, { event: "task_failed", channel: "sms", body: "Sorry" });
    expectStatus(await call(`/notification_templates/${theirs.body.id}/`, { token: acc.admin.token }), 404);
    expectStatus(
      await call(`/notification_templates/${theirs.body.id}/`, {
        method: "PATCH",
        token: acc.admin.token,
        body: { body: "mine" },
      }),
      404,
    );
  });
});

describe("notifications are sent when a task reaches the event (contract §18)", () => {
  it("texts each contact phone once when the task is assigned, with a working tracking link; HTML stays as written", async () => {
    const acc = await newAccount();
    expectStatus(
      await template(acc, {
        event: "task_assigned",
        channel: "sms",
        body: "Hi {{contact.name}} <b>&</b>: {{description}}. Track: {{tracker_url}}",
      }),
      201,
    );
    await template(acc, { event: "task_assigned", channel: "sms", body: "Inactive", is_active: false });
    const t = await call("/tasks/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        category: "drop_off",
        address: { raw_address: "Helsinki" },
        contact: { name: "Aino", phones: [TO, TO2, TO] },
        description: "<script>alert(1)</script>",
        assignee: acc.admin.user,
      },
    });
    expectStatus(t, 201);
    expect(t.body.state).toBe("assigned");
    const sent = await eventually(async () => {
      const s = await smsOf(acc, t.body.id);
      return s.length === 2 && s.every((x) => x.state === "sent") ? s : null;
    });
    expect(sent.map((s) => s.to).sort()).toEqual([TO, TO2].sort());
    const text: string = sent[0].message;
    expect(text).toMatch(
      /^Hi Aino <b>&<\/b>: <script>alert\(1\)<\/script>\. Track: https:\/\/api\.test\/t\/[^/]+\/$/,
    );
    const link = text.split("Track: ")[1];
    // Both messages share one tracker, which shows this task publicly.
    expect(sent[1].message).toBe(text);
    const page = await exports.default.fetch(new Request(link, { headers: { Accept: "application/json" } }));
    expect(page.status).toBe(200);
    expect(((await page.json()) as any).tasks).toHaveLength(1);
    // The task moves on and back (unassign, assign again): the same template and phones, no second message.
    await command(acc, t.body.url, "unassign");
    await command(acc, t.body.url, "assign", { assignee: acc.admin.user });
    await sweepNotifications(env);
    await new Promise((r) => setTimeout(r, 500));
    expect(await smsOf(acc, t.body.id)).toHaveLength(2);
    expect((await sends(t.body.id)).map((s) => s.state)).toEqual(["sent", "sent"]);
  });

  it("messages rendered at once share one tracker of the task", async () => {
    const acc = await newAccount();
    await template(acc, { event: "task_assigned", channel: "sms", body: "Track: {{tracker_url}}" });
    const task = await insertTask(acc.account.id);
    const phones = ["+358401111111", "+358402222222", "+358403333333", "+358404444444"];
    await stored
      .prepare("UPDATE tasks SET contact = ? WHERE id = ?")
      .bind(JSON.stringify({ name: "D", phones }), task.id)
      .run();
    await stored
      .prepare("UPDATE tasks SET state = 'assigned', assignee_id = ? WHERE id = ?")
      .bind(acc.admin.userId, task.id)
      .run();
    // Fenced by hand (no queue message), then all four rendered concurrently.
    const fence = Date.now();
    await stored
      .prepare("UPDATE notification_sends SET enqueued_at = ? WHERE task_id = ?")
      .bind(fence, task.id)
      .run();
    const rows = await sends(task.id);
    expect(rows).toHaveLength(4);
    await Promise.all(
      rows.map((r) => deliverNotification(env, { sendId: r.id, fence, baseUrl: "https://api.test" })),
    );
    const trackers = await stored
      .prepare("SELECT COUNT(*) AS n FROM trackers WHERE account_id = ?")
      .bind(acc.account.id)
      .first<{ n: number }>();
    expect(trackers!.n).toBe(1);
    const texts = (await smsOf(acc, task.id)).map((s) => s.message);
    expect(texts).toHaveLength(4);
    expect(new Set(texts).size).toBe(1);
  });

  it("a redelivered or superseded message never sends twice; racing relays queue a row once", async () => {
    const acc = await newAccount();
    await template(acc, { event: "task_transit", channel: "sms", body: "On the way" });
    const task = await insertTask(acc.account.id, { state: "assigned", assigneeId: acc.admin.userId });
    await stored
      .prepare("UPDATE tasks SET contact = ? WHERE id = ?")
      .bind(JSON.stringify({ name: "B", phones: [TO] }), task.id)
      .run();
    // A write the relay after requests never sees (straight to D1): the trigger plans it anyway.
    await stored.prepare("UPDATE tasks SET state = 'transit' WHERE id = ?").bind(task.id).run();
    const [planned] = await sends(task.id);
    expect(planned).toMatchObject({ state: "pending", channel: "sms", recipient: TO, event: "task_transit" });
    const counts = await Promise.all([
      relayNotifications(env, "https://api.test", { accountId: acc.account.id }),
      relayNotifications(env, "https://api.test", { accountId: acc.account.id }),
    ]);
    expect(counts.sort()).toEqual([0, 1]);
    const row = (await sends(task.id))[0];
    const m = { sendId: row.id, fence: row.enqueued_at, baseUrl: "https://api.test" };
    await Promise.all([deliverNotification(env, m), deliverNotification(env, m)]);
    await deliverNotification(env, { ...m, fence: row.enqueued_at - 1 });
    await eventually(async () => (await smsOf(acc, task.id)).every((s) => s.state === "sent"));
    const sms = await smsOf(acc, task.id);
    expect(sms).toHaveLength(1);
    expect(sms[0]).toMatchObject({ to: TO, message: "On the way" });
    expect((await sends(task.id))[0]).toMatchObject({ state: "sent", sms_id: sms[0].id });
  });

  it("task_completed e-mails attach the POD PDF with the template's options, and copy the assignee when asked", async () => {
    const acc = await newAccount();
    await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { review_emails_to_assignee: true },
    });
    const tpl = await template(acc, {
      event: "task_completed",
      channel: "email",
      subject: "Delivered: {{address.formatted_address}}",
      body: "Your parcel was delivered ({{state}}).",
      pod_show_description: false,
      language: "fi",
    });
    expectStatus(tpl, 201);
    const t = await call("/tasks/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        category: "drop_off",
        address: { raw_address: "Helsinki" },
        contact: { name: "Aino", emails: ["Aino@Example.test"] },
        description: "SECRET-DESCRIPTION",
        assignee: acc.admin.user,
      },
    });
    expectStatus(t, 201);
    await command(acc, t.body.url, "transit");
    await command(acc, t.body.url, "complete", { notes: "At the door" });
    const mails = await eventually(async () => {
      const m = await outbox(acc);
      return m.length === 2 ? m : null;
    });
    expect(mails.map((m) => m.to).sort()).toEqual(
      ["aino@example.test", acc.admin.email.toLowerCase()].sort(),
    );
    for (const m of mails) {
      expect(m.subject).toMatch(/^Delivered: /);
      expect(m.text).toBe("Your parcel was delivered (completed).");
      expect(m.attachments).toHaveLength(1);
      expect(m.attachments[0]).toMatchObject({
        content_type: "application/pdf",
        file_name: `pod-${t.body.id}.pdf`,
      });
    }
    const res = await exports.default.fetch(new Request(mails[0].attachments[0].file));
    expect(res.status).toBe(200);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(new TextDecoder("latin1").decode(bytes.slice(0, 5))).toBe("%PDF-");
    const text = (await pdfPages(bytes)).map((p) => p.text).join("\n");
    expect(text).toContain("At the door");
    expect(text).not.toContain("SECRET-DESCRIPTION");
    // In the template's language (Finnish here), whatever the account's.
    expect(text).toContain("Toimitusvahvistus");
    expect(text).toContain("Suoritettu");
    // The POD endpoint takes the same template's options.
    const html = await (
      await exports.default.fetch(
        new Request(`https://api.test/tasks/${t.body.id}/pod/?template=${tpl.body.id}`, {
          headers: { Authorization: `Bearer ${acc.admin.token}` },
        }),
      )
    ).text();
    expect(html).toContain("At the door");
    expect(html).not.toContain("SECRET-DESCRIPTION");
    const plain = await (
      await exports.default.fetch(
        new Request(`https://api.test/tasks/${t.body.id}/pod/`, {
          headers: { Authorization: `Bearer ${acc.admin.token}` },
        }),
      )
    ).text();
    expect(plain).toContain("SECRET-DESCRIPTION");
    const other = await newAccount();
    const theirs = await template(other, { event: "task_failed", channel: "sms", body: "x" });
    expectStatus(
      await call(`/tasks/${t.body.id}/pod/?template=${theirs.body.id}`, { token: acc.admin.token }),
      400,
    );
  });

  it("an e-mail provider outage backs off and retries with a new fence; the old message is dropped", async () => {
    const acc = await newAccount();
    await template(acc, {
      event: "task_failed",
      channel: "email",
      subject: "Sorry",
      body: "We could not come.",
    });
    const task = await insertTask(acc.account.id, { state: "active", assigneeId: acc.admin.userId });
    await stored
      .prepare("UPDATE tasks SET contact = ?, state = 'failed' WHERE id = ?")
      .bind(JSON.stringify({ name: "C", emails: ["c@example.test"] }), task.id)
      .run();
    // Fenced by hand instead of relayed, so no queue message races the calls below.
    await stored
      .prepare("UPDATE notification_sends SET enqueued_at = ? WHERE task_id = ?")
      .bind(Date.now(), task.id)
      .run();
    const row = (await sends(task.id))[0];
    const broken = { ...env, EMAIL_PROVIDER: "workers", EMAIL: undefined } as unknown as Env;
    const m = { sendId: row.id, fence: row.enqueued_at, baseUrl: "https://api.test" };
    await deliverNotification(broken, m);
    const after = (await sends(task.id))[0];
    expect(after).toMatchObject({ state: "pending", attempts: 1 });
    expect(after.error_message).toContain("EMAIL");
    expect(after.enqueued_at).toBeGreaterThan(row.enqueued_at);
    await deliverNotification(env, m); // superseded: nothing
    expect((await sends(task.id))[0].state).toBe("pending");
    await deliverNotification(env, { ...m, fence: after.enqueued_at });
    expect((await sends(task.id))[0]).toMatchObject({ state: "sent", attempts: 2 });
    expect((await outbox(acc)).filter((x) => x.to === "c@example.test")).toHaveLength(1);
  });
});
