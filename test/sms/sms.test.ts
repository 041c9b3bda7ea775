import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SmsUnavailableError, TwilioSmsSender, twilioSignature } from "../../src/services/messaging/sms";
import { sendQueuedSms } from "../../src/services/sms";
import { call, expectStatus, newAccount } from "../helpers";
import { stored } from "../stored";

const TO = "+358401234567";

async function settled(token: string, id: string) {
  for (let i = 0; i < 100; i++) {
    const r = await call(`/sms/${id}/`, { token });
    if (r.body.state !== "queued") return r.body;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error("not sent");
}

describe("/sms/ (contract §18)", () => {
  it("queues, sends through the local provider, and answers a duplicate with the existing SMS", async () => {
    const acc = await newAccount();
    const r = await call("/sms/", { token: acc.admin.token, body: { to: TO, message: "Hello" } });
    expectStatus(r, 201);
    expect(r.body).toMatchObject({
      to: TO,
      message: "Hello",
      state: "queued",
      provider: "local",
      task: null,
    });
    const sent = await settled(acc.admin.token, r.body.id);
    expect(sent.state).toBe("sent");
    expect(sent.provider_message_id).toMatch(/^local-/);
    expect(sent.sent_at).toEqual(expect.any(String));
    const dup = await call("/sms/", { token: acc.admin.token, body: { to: TO, message: "Hello" } });
    expectStatus(dup, 200);
    expect(dup.body.id).toBe(r.body.id);
    const again = await call(`/sms/${r.body.id}/resend/`, { method: "POST", token: acc.admin.token });
    expectStatus(again, 201);
    expect(again.body.id).not.toBe(r.body.id);
    const list = await call("/sms/", { token: acc.admin.token });
    expect(list.body.results).toHaveLength(2);
  });

  it("two racing identical requests make one SMS", async () => {
    const acc = await newAccount();
    const replies = await Promise.all(
      [1, 2, 3].map(() => call("/sms/", { token: acc.admin.token, body: { to: TO, message: "Race" } })),
    );
    expect(new Set(replies.map((x) => x.body.id)).size).toBe(1);
    expect(replies.filter((x) => x.status === 201)).toHaveLength(1);
  });

  it("refuses numbers not in E.164, 1,601 characters, other accounts' tasks and SMS", async () => {
    const acc = await newAccount();
    const other = await newAccount();
    for (const body of [
      { to: "0401234567", message: "x" },
      { to: "+0401234567", message: "x" },
      { to: TO, message: "x".repeat(1601) },
      { to: TO, message: "x", task: `https://api.test/tasks/${crypto.randomUUID()}/` },
    ]) {
      expectStatus(await call("/sms/", { token: acc.admin.token, body }), 400);
    }
    expectStatus(
      await call("/sms/", { token: acc.admin.token, body: { to: TO, message: "x".repeat(1600) } }),
      201,
    );
    const theirs = await call("/sms/", { token: other.admin.token, body: { to: TO, message: "theirs" } });
    expectStatus(await call(`/sms/${theirs.body.id}/`, { token: acc.admin.token }), 404);
    expectStatus(
      await call(`/sms/${theirs.body.id}/resend/`, { method: "POST", token: acc.admin.token }),
      404,
    );
  });

  it("a provider outage retries and never sends twice; a stale claim is closed, not re-sent", async () => {
    const acc = await newAccount();
    const r = await call("/sms/", { token: acc.admin.token, body: { to: TO, message: "Outage" } });
    await settled(acc.admin.token, r.body.id);
    // A fresh row in `queued`, sent by hand with a failing, then a working, provider.
    const id = crypto.randomUUID();
    await stored
      .prepare(
        "INSERT INTO sms (id, account_id, to_number, message, state, provider, created_at, updated_at) VALUES (?, ?, ?, 'm', 'queued', 'local', ?, ?)",
      )
      .bind(id, acc.account.id, TO, Date.now(), Date.now())
      .run();
    let sends = 0;
    const down = {
      name: "local",
      send: async () => {
        sends++;
        throw new SmsUnavailableError("down");
      },
    };
    const up = {
      name: "local",
      send: async () => {
        sends++;
        return { providerMessageId: "p-1" };
      },
    };
    const msg = { accountId: acc.account.id, smsId: id, baseUrl: "https://api.test" };
    expect(await sendQueuedSms(env, msg, down)).toBe("retry");
    expect(await sendQueuedSms(env, msg, up)).toBe("done");
    expect(await sendQueuedSms(env, msg, up)).toBe("done");
    expect(sends).toBe(2);
    const row = await stored
      .prepare("SELECT state, provider_message_id FROM sms WHERE id = ?")
      .bind(id)
      .first<any>();
    expect(row).toEqual({ state: "sent", provider_message_id: "p-1" });
    // Claimed by a delivery that then died: closed as failed once stale, never sent again.
    await stored
      .prepare("UPDATE sms SET state = 'sending', updated_at = ? WHERE id = ?")
      .bind(Date.now() - 120_000, id)
      .run();
    expect(await sendQueuedSms(env, msg, up)).toBe("done");
    expect(sends).toBe(2);
    expect((await stored.prepare("SELECT state FROM sms WHERE id = ?").bind(id).first<any>()).state).toBe(
      "failed",
    );
  });
});

describe("Twilio (its REST API and signed status callbacks)", () => {
  it("posts To, From, Body and StatusCallback with Basic auth; 5xx is temporary", async () => {
    const calls: { url: string; init: RequestInit }[] = [];
    const fake = (async (url: string, init: RequestInit) => {
      calls.push({ url, init });
      return Response.json({ sid: "SM123", status: "queued" }, { status: 201 });
    }) as unknown as typeof fetch;
    const s = new TwilioSmsSender("AC1", "tok", "+15005550006", fake);
    expect(await s.send({ to: TO, body: "Hi", statusCallback: "https://api.test/sms/status/" })).toEqual({
      providerMessageId: "SM123",
    });
    expect(calls[0].url).toBe("https://api.twilio.com/2010-04-01/Accounts/AC1/Messages.json");
    expect((calls[0].init.headers as Record<string, string>).Authorization).toBe(`Basic ${btoa("AC1:tok")}`);
    const form = new URLSearchParams(String(calls[0].init.body));
    expect(Object.fromEntries(form)).toEqual({
      To: TO,
      From: "+15005550006",
      Body: "Hi",
      StatusCallback: "https://api.test/sms/status/",
    });
    const down = new TwilioSmsSender(
      "AC1",
      "tok",
      "+1",
      (async () => new Response("", { status: 503 })) as unknown as typeof fetch,
    );
    await expect(down.send({ to: TO, body: "x", statusCallback: null })).rejects.toBeInstanceOf(
      SmsUnavailableError,
    );
    const refused = new TwilioSmsSender("AC1", "tok", "+1", (async () =>
      Response.json({ code: 21211, message: "Invalid 'To'" }, { status: 400 })) as unknown as typeof fetch);
    await expect(refused.send({ to: TO, body: "x", statusCallback: null })).rejects.toThrow(/21211/);
  });

  it("accepts a status callback with Twilio's signature, refuses a forged one", async () => {
    const acc = await newAccount();
    const id = crypto.randomUUID();
    await stored
      .prepare(
        "INSERT INTO sms (id, account_id, to_number, message, state, provider, provider_message_id, created_at, updated_at) VALUES (?, ?, ?, 'm', 'sent', 'twilio', 'SM-cb', ?, ?)",
      )
      .bind(id, acc.account.id, TO, Date.now(), Date.now())
      .run();
    const url = "https://api.test/sms/status/";
    const params = new URLSearchParams({
      MessageSid: "SM-cb",
      MessageStatus: "delivered",
      AccountSid: "AC1",
    });
    const post = (signature: string) =>
      exports.default.fetch(
        new Request(url, {
          method: "POST",
          headers: {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Twilio-Signature": signature,
            "CF-Connecting-IP": "203.0.113.9",
          },
          body: params.toString(),
        }),
      );
    // The test environment's token (vitest.config.ts): TWILIO_AUTH_TOKEN.
    const good = await twilioSignature(env.TWILIO_AUTH_TOKEN!, url, params);
    expect((await post("forged")).status).toBe(401);
    expect((await post(good)).status).toBe(204);
    expect((await stored.prepare("SELECT state FROM sms WHERE id = ?").bind(id).first<any>()).state).toBe(
      "delivered",
    );
  });

  it("a status callback naming its account (as the callback URL this service gives Twilio does) is recorded in that account's database", async () => {
    const acc = await newAccount();
    const id = crypto.randomUUID();
    const sid = `SM-${crypto.randomUUID()}`;
    await stored
      .prepare(
        "INSERT INTO sms (id, account_id, to_number, message, state, provider, provider_message_id, created_at, updated_at) VALUES (?, ?, ?, 'm', 'sent', 'twilio', ?, ?, ?)",
      )
      .bind(id, acc.account.id, TO, sid, Date.now(), Date.now())
      .run();
    const url = `https://api.test/sms/status/?account=${acc.account.id}`;
    const params = new URLSearchParams({ MessageSid: sid, MessageStatus: "undelivered", ErrorCode: "30005" });
    const post = async (to: string, signedFor: string) =>
      exports.default.fetch(
        new Request(to, {
          method: "POST",
          headers: {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Twilio-Signature": await twilioSignature(env.TWILIO_AUTH_TOKEN!, signedFor, params),
            "CF-Connecting-IP": "203.0.113.9",
          },
          body: params.toString(),
        }),
      );
    // The account is part of what Twilio signs: another account put in its place is refused.
    const other = `https://api.test/sms/status/?account=${crypto.randomUUID()}`;
    expect((await post(other, url)).status).toBe(401);
    expect((await post(`https://api.test/sms/status/?account=not-an-id`, url)).status).toBe(400);
    expect((await post(url, url)).status).toBe(204);
    const row = await stored
      .prepare("SELECT state, error_message FROM sms WHERE id = ?")
      .bind(id)
      .first<any>();
    expect(row).toEqual({ state: "failed", error_message: "Provider error 30005" });
  });
});
