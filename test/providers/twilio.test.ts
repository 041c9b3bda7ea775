import { env, exports } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { SmsUnavailableError, smsSenderFromEnv, TwilioSmsSender } from "../../src/services/messaging/sms";
import { sendQueuedSms } from "../../src/services/sms";
import { call, newAccount, type TestAccount } from "../helpers";
import { stored } from "../stored";

// Twilio's Messages API as served by the local stand-in (test/providers/server.mjs): the real
// provider over real HTTP, its Basic auth, its form fields, its errors and signed callbacks.
const server = `${inject("providers").url}/twilio`;
const FROM = "+15005550006";
const hex = (n: number) =>
  [...crypto.getRandomValues(new Uint8Array(n))].map((b) => b.toString(16).padStart(2, "0")).join("");

function twilio(token = env.TWILIO_AUTH_TOKEN!) {
  const sid = `AC${hex(16)}`;
  const sender = smsSenderFromEnv({
    SMS_PROVIDER: "twilio",
    TWILIO_ACCOUNT_SID: sid,
    TWILIO_AUTH_TOKEN: token,
    SMS_FROM: FROM,
    TWILIO_API_URL: server,
  });
  const received = async () => (await (await fetch(`${server}/__messages/${sid}`)).json()) as any[];
  return { sid, sender, received };
}

/** A queued SMS row, as POST /sms/ leaves it (inserted directly so the local queue consumer does not send it first). */
async function queued(acc: TestAccount, to: string, message: string) {
  const id = crypto.randomUUID();
  await stored
    .prepare(
      "INSERT INTO sms (id, account_id, to_number, message, state, provider, created_at, updated_at) VALUES (?, ?, ?, ?, 'queued', 'twilio', ?, ?)",
    )
    .bind(id, acc.account.id, to, message, Date.now(), Date.now())
    .run();
  return { accountId: acc.account.id, smsId: id, baseUrl: "https://api.test" };
}

const row = (id: string) => stored.prepare("SELECT * FROM sms WHERE id = ?").bind(id).first<any>();

describe("Twilio provider against a server speaking Twilio's Messages API", () => {
  it("sends once with To, From, Body and StatusCallback; the signed delivery receipt marks it delivered", async () => {
    const acc = await newAccount();
    const { sid, sender, received } = twilio();
    const msg = await queued(acc, "+358401234567", "Your parcel is on its way: ääkköset ✓");
    expect(await sendQueuedSms(env, msg, sender)).toBe("done");
    // A redelivered queue message sends nothing more.
    expect(await sendQueuedSms(env, msg, sender)).toBe("done");
    const got = await received();
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({
      to: "+358401234567",
      from: FROM,
      body: "Your parcel is on its way: ääkköset ✓",
      status_callback: `https://api.test/sms/status/?account=${acc.account.id}`,
      account_sid: sid,
    });
    const sent = await row(msg.smsId);
    expect(sent).toMatchObject({ state: "sent", provider_message_id: got[0].sid });
    expect(sent.provider_message_id).toMatch(/^SM[0-9a-f]{32}$/);

    // The receipt as Twilio would post it, signed by the stand-in with node:crypto.
    const cb = (await (await fetch(`${server}/__callback/${sid}/${got[0].sid}/delivered`)).json()) as any;
    const post = (signature: string) =>
      exports.default.fetch(
        new Request(cb.url, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded", "X-Twilio-Signature": signature },
          body: new URLSearchParams(cb.params).toString(),
        }),
      );
    expect((await post(cb.signature.replace(/^./, (c: string) => (c === "A" ? "B" : "A")))).status).toBe(401);
    expect((await row(msg.smsId)).state).toBe("sent");
    expect((await post(cb.signature)).status).toBe(204);
    expect((await row(msg.smsId)).state).toBe("delivered");
    const api = await call(`/sms/${msg.smsId}/`, { token: acc.admin.token });
    expect(api.body).toMatchObject({ state: "delivered", provider_message_id: got[0].sid });
  });

  it("an outage (503) is retried and the message is sent exactly once when Twilio is back", async () => {
    const acc = await newAccount();
    const { sid, sender, received } = twilio();
    await fetch(`${server}/__outage/${sid}/2`);
    const msg = await queued(acc, "+358401234568", "Retry me");
    expect(await sendQueuedSms(env, msg, sender)).toBe("retry");
    expect((await row(msg.smsId)).state).toBe("queued");
    expect(await sendQueuedSms(env, msg, sender)).toBe("retry");
    expect(await sendQueuedSms(env, msg, sender)).toBe("done");
    expect(await sendQueuedSms(env, msg, sender)).toBe("done");
    expect((await received()).map((m) => m.body)).toEqual(["Retry me"]);
    expect((await row(msg.smsId)).state).toBe("sent");
  });

  it("Twilio's refusals fail the SMS with its error code and are not retried", async () => {
    const acc = await newAccount();
    const { sender, received } = twilio();
    // Twilio checks numbers more strictly than a form can: "+1" alone is refused with 21211.
    const bad = await queued(acc, "+1", "x");
    expect(await sendQueuedSms(env, bad, sender)).toBe("done");
    expect(await row(bad.smsId)).toMatchObject({ state: "failed" });
    expect((await row(bad.smsId)).error_message).toContain("21211");
    const wrongToken = twilio("not-the-token").sender;
    const denied = await queued(acc, "+358401234569", "x");
    expect(await sendQueuedSms(env, denied, wrongToken)).toBe("done");
    expect((await row(denied.smsId)).error_message).toContain("20003");
    expect(await received()).toEqual([]);
  });

  it("an unreachable Twilio is a temporary failure", async () => {
    const sender = smsSenderFromEnv({
      SMS_PROVIDER: "twilio",
      TWILIO_ACCOUNT_SID: `AC${hex(16)}`,
      TWILIO_AUTH_TOKEN: "t",
      SMS_FROM: FROM,
      // A port nothing listens on.
      TWILIO_API_URL: "http://127.0.0.1:9",
    });
    await expect(
      sender.send({ to: "+358401234567", body: "x", statusCallback: null }),
    ).rejects.toBeInstanceOf(SmsUnavailableError);
  });

  it("no answer in time fails the SMS as 'may have been sent' instead of risking a second send", async () => {
    const acc = await newAccount();
    const { sid, received } = twilio();
    const slow = new TwilioSmsSender(sid, env.TWILIO_AUTH_TOKEN!, FROM, fetch, `${server}-slow`, 300);
    const msg = await queued(acc, "+358401234570", "Slow");
    expect(await sendQueuedSms(env, msg, slow)).toBe("done");
    const failed = await row(msg.smsId);
    expect(failed.state).toBe("failed");
    expect(failed.error_message).toMatch(/may have been sent/);
    // Twilio did take it: a retry would have been a second text.
    await new Promise((r) => setTimeout(r, 1800));
    expect((await received()).map((m) => m.body)).toEqual(["Slow"]);
  });
});
