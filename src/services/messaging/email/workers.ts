import { EmailError, type EmailMessage, type EmailSender } from "./types";

/** The shape of a `send_email` binding (wrangler.jsonc `send_email`), as far as it is used here. */
export type SendEmailBinding = { send(message: unknown): Promise<unknown> };
type EmailMessageCtor = new (from: string, to: string, raw: string) => unknown;

/** Encodes a header value as an RFC 2047 encoded-word when it is not plain ASCII. */
function headerValue(v: string): string {
  if (/^[\x20-\x7e]*$/.test(v)) return v;
  const bytes = new TextEncoder().encode(v);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return `=?UTF-8?B?${btoa(bin)}?=`;
}

/** A minimal RFC 5322 message: one text/plain UTF-8 part, base64 so any text survives transport. */
export function buildMime(from: string, m: EmailMessage, messageId: string, date = new Date()): string {
  const bytes = new TextEncoder().encode(m.text);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  const body = btoa(bin).replace(/.{76}/g, "$&\r\n");
  return [
    `From: ${from}`,
    `To: ${m.to}`,
    `Subject: ${headerValue(m.subject)}`,
    `Date: ${date.toUTCString()}`,
    `Message-ID: <${messageId}>`,
    "MIME-Version: 1.0",
    'Content-Type: text/plain; charset="utf-8"',
    "Content-Transfer-Encoding: base64",
    "",
    body,
  ].join("\r\n");
}

/**
 * Deployed: the Workers `send_email` binding (Email Routing). The sender address must be on a
 * domain with Email Routing enabled; the binding decides which recipients are allowed.
 */
export class WorkersEmailSender implements EmailSender {
  readonly name = "workers";
  constructor(
    private readonly binding: SendEmailBinding,
    private readonly from: string,
    private readonly ctor: () => Promise<EmailMessageCtor>,
  ) {}

  async send(m: EmailMessage): Promise<void> {
    const domain = this.from.split("@")[1] ?? "localhost";
    const raw = buildMime(this.from, m, `${crypto.randomUUID()}@${domain}`);
    try {
      const Ctor = await this.ctor();
      await this.binding.send(new Ctor(this.from, m.to, raw));
    } catch (err) {
      throw new EmailError(`send_email refused the message: ${String(err)}`, { cause: err });
    }
  }
}
