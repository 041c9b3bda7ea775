/**
 * Outbound SMS (contract §18) behind one interface with two providers, as e-mail has:
 * `local` (the default in development and tests: the message is stored as sent) and Twilio's
 * REST API (`POST /2010-04-01/Accounts/{sid}/Messages.json`, HTTP Basic with the account SID
 * and auth token, form-encoded `To`, `From`, `Body`, `StatusCallback`).
 */
export type SmsSendResult = { providerMessageId: string };

/** Twilio did not take the message (unreachable, 5xx, 429): safe to try again later. */
export class SmsUnavailableError extends Error {}

/**
 * No answer in time: Twilio may have taken the message. Its Messages API has no idempotency
 * key, so trying again could send it twice; the SMS is failed with this reason instead, and an
 * operator who sees it undelivered can `resend` it.
 */
export class SmsOutcomeUnknownError extends Error {}

export interface SmsSender {
  readonly name: string;
  send(m: { to: string; body: string; statusCallback: string | null }): Promise<SmsSendResult>;
}

export class LocalSmsSender implements SmsSender {
  readonly name = "local";
  async send(): Promise<SmsSendResult> {
    return { providerMessageId: `local-${crypto.randomUUID()}` };
  }
}

export class TwilioSmsSender implements SmsSender {
  readonly name = "twilio";
  private readonly fetchImpl: typeof fetch;
  constructor(
    private readonly sid: string,
    private readonly token: string,
    private readonly from: string,
    fetchImpl: typeof fetch = fetch,
    private readonly apiBase = "https://api.twilio.com",
    private readonly timeoutMs = 15_000,
  ) {
    // Called unbound: workerd's fetch throws "Illegal invocation" when called as a method.
    this.fetchImpl = (input, init) => fetchImpl(input, init);
  }

  async send(m: { to: string; body: string; statusCallback: string | null }): Promise<SmsSendResult> {
    const form = new URLSearchParams({ To: m.to, From: this.from, Body: m.body });
    if (m.statusCallback) form.set("StatusCallback", m.statusCallback);
    let res: Response;
    try {
      res = await this.fetchImpl(
        `${this.apiBase.replace(/\/+$/, "")}/2010-04-01/Accounts/${encodeURIComponent(this.sid)}/Messages.json`,
        {
          method: "POST",
          headers: {
            Authorization: `Basic ${btoa(`${this.sid}:${this.token}`)}`,
            "Content-Type": "application/x-www-form-urlencoded",
          },
          body: form,
          signal: AbortSignal.timeout(this.timeoutMs),
        },
      );
    } catch (err) {
      if ((err as Error)?.name === "TimeoutError")
        throw new SmsOutcomeUnknownError(
          `Twilio did not answer within ${this.timeoutMs / 1000} s; the message may have been sent, so it was not sent again.`,
        );
      throw new SmsUnavailableError(`Twilio unreachable: ${String(err)}`);
    }
    const body = (await res.json().catch(() => null)) as {
      sid?: string;
      message?: string;
      code?: number;
    } | null;
    if (res.status >= 500 || res.status === 429)
      throw new SmsUnavailableError(`Twilio answered ${res.status}`);
    if (!res.ok || !body?.sid)
      throw new Error(
        `Twilio refused the message: ${body?.code ?? res.status} ${body?.message ?? ""}`.trim(),
      );
    return { providerMessageId: body.sid };
  }
}

export type SmsEnv = {
  SMS_PROVIDER?: string;
  SMS_FROM?: string;
  TWILIO_ACCOUNT_SID?: string;
  TWILIO_AUTH_TOKEN?: string;
  /** Twilio's API host: a regional one (e.g. https://api.dublin.ie1.twilio.com) or, in tests, a local stand-in. */
  TWILIO_API_URL?: string;
};

export function smsSenderFromEnv(env: SmsEnv, fetchImpl?: typeof fetch): SmsSender {
  if (env.SMS_PROVIDER === "twilio") {
    if (!env.TWILIO_ACCOUNT_SID || !env.TWILIO_AUTH_TOKEN || !env.SMS_FROM) {
      throw new Error("SMS_PROVIDER=twilio needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and SMS_FROM");
    }
    return new TwilioSmsSender(
      env.TWILIO_ACCOUNT_SID,
      env.TWILIO_AUTH_TOKEN,
      env.SMS_FROM,
      fetchImpl,
      env.TWILIO_API_URL || undefined,
    );
  }
  return new LocalSmsSender();
}

/**
 * Twilio's request signature (X-Twilio-Signature): base64 HMAC-SHA1, keyed by the auth token,
 * of the full URL followed by each POST parameter's name and value, names sorted.
 */
export async function twilioSignature(
  authToken: string,
  url: string,
  params: URLSearchParams,
): Promise<string> {
  const names = [...new Set(params.keys())].sort();
  let data = url;
  for (const n of names) for (const v of params.getAll(n)) data += n + v;
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(authToken),
    { name: "HMAC", hash: "SHA-1" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(data)));
  return btoa(String.fromCharCode(...mac));
}
