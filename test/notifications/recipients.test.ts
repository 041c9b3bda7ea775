import { describe, expect, it } from "vitest";
import { buildMime } from "../../src/services/messaging/email/workers";
import { eventually } from "../files/helpers";
import { call, expectStatus, newAccount, type TestAccount } from "../helpers";
import { stored } from "../stored";

const sends = (taskId: string) =>
  stored
    .prepare(
      "SELECT recipient, channel, state, error_message FROM notification_sends WHERE task_id = ? ORDER BY recipient",
    )
    .bind(taskId)
    .all<any>()
    .then((r) => r.results);

async function assignedTask(acc: TestAccount, contact: Record<string, unknown>) {
  const t = await call("/tasks/", {
    token: acc.admin.token,
    body: {
      account: acc.account.url,
      category: "drop_off",
      address: { raw_address: "Helsinki" },
      contact,
      assignee: acc.admin.user,
    },
  });
  expectStatus(t, 201);
  return t.body;
}

describe("notification recipients are checked before anything is sent", () => {
  it("an e-mail with a line break is refused on write (a Bcc could ride in it)", async () => {
    const acc = await newAccount();
    for (const path of ["/tasks/", "/contact_addresses/"]) {
      const body =
        path === "/tasks/"
          ? { account: acc.account.url, category: "drop_off", address: { raw_address: "Helsinki" } }
          : { address: { raw_address: "Helsinki" } };
      const r = await call(path, {
        token: acc.admin.token,
        body: { ...body, contact: { emails: ["a@example.test\r\nBcc: thief@example.test"] } },
      });
      expectStatus(r, 400);
      expect(r.body.contact.emails).toBeTruthy();
    }
  });

  it("SMS go only to E.164 numbers (spaces and dashes allowed); others are skipped with the reason", async () => {
    const acc = await newAccount();
    expectStatus(
      await call("/notification_templates/", {
        token: acc.admin.token,
        body: { event: "task_assigned", channel: "sms", body: "On its way" },
      }),
      201,
    );
    const task = await assignedTask(acc, {
      phones: ["+358 40 123-4567", "040 123 4567;ext=9", "0401234567"],
    });
    const done = await eventually(async () => {
      const rows = await sends(task.id);
      return rows.length === 3 && rows.every((s: any) => s.state !== "pending") ? rows : null;
    });
    const byRecipient = Object.fromEntries(done.map((s: any) => [s.recipient, s]));
    expect(byRecipient["+358 40 123-4567"].state).toBe("sent");
    // Phone numbers as people write them (contact phones are checked on write, issue 52), not E.164.
    for (const bad of ["040 123 4567;ext=9", "0401234567"]) {
      expect(byRecipient[bad].state).toBe("failed");
      expect(byRecipient[bad].error_message).toMatch(/not a number in E\.164 format/);
    }
    const sms = await call("/sms/?page_size=500", { token: acc.admin.token });
    expect(sms.body.results.map((s: any) => s.to)).toEqual(["+358401234567"]);
  });

  it("an e-mail recipient that is not an address is skipped; the MIME builder refuses header injection", async () => {
    const acc = await newAccount();
    expectStatus(
      await call("/notification_templates/", {
        token: acc.admin.token,
        body: { event: "task_assigned", channel: "email", subject: "Hi", body: "On its way" },
      }),
      201,
    );
    const task = await assignedTask(acc, { emails: ["ok@example.test", "no address here"] });
    const done = await eventually(async () => {
      const rows = await sends(task.id);
      return rows.length === 2 && rows.every((s: any) => s.state !== "pending") ? rows : null;
    });
    const bad = done.find((s: any) => s.recipient === "no address here");
    expect(bad).toMatchObject({
      state: "failed",
      error_message: expect.stringMatching(/not an e-mail address/),
    });
    expect(done.find((s: any) => s.recipient === "ok@example.test").state).toBe("sent");
    const message = { subject: "Hi", text: "x", kind: "notification", accountId: null };
    expect(() =>
      buildMime("from@example.test", { ...message, to: "a@example.test\r\nBcc: b@example.test" }, "id@x"),
    ).toThrow(/Not an e-mail address in To/);
    const mime = buildMime(
      "from@example.test",
      { ...message, to: "a@example.test", subject: "Hi\r\nBcc: b@x" },
      "id@x",
    );
    expect(mime).not.toMatch(/^Bcc:/m);
  });
});
