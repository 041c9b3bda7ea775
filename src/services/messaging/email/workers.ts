import { EMAIL_ADDRESS } from "./address";
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

const base64Lines = (bytes: Uint8Array) => {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/.{76}/g, "$&\r\n");
};

/**
 * A minimal RFC 5322 message: one text/plain UTF-8 part, base64 so any text survives transport;
 * with attachments, a multipart/mixed body (RFC 2046 §5.1.3) of the text and each file, the
 * file names as RFC 2231 parameters when they are not plain ASCII.
 */
export function buildMime(from: string, m: EmailMessage, messageId: string, date = new Date()): string {
  // Every header is encoded (RFC 2047 for text) or checked: an address with a line break would
  // start a header of its own (RFC 5322 §2.2), so it is refused, never sent.
  for (const [name, address] of [
    ["From", from],
    ["To", m.to],
  ] as const) {
    if (!EMAIL_ADDRESS.test(address)) throw new EmailError(`Not an e-mail address in ${name}: refused.`);
  }
  const head = [
    `From: ${from}`,
    `To: ${m.to}`,
    `Subject: ${headerValue(m.subject)}`,
    `Date: ${date.toUTCString()}`,
    `Message-ID: <${messageId}>`,
    "MIME-Version: 1.0",
  ];
  const text = [
    'Content-Type: text/plain; charset="utf-8"',
    "Content-Transfer-Encoding: base64",
    "",
    base64Lines(new TextEncoder().encode(m.text)),
  ];
  if (!m.attachments?.length) return [...head, ...text].join("\r\n");
  const boundary = `=_fd_${messageId.replace(/[^A-Za-z0-9]/g, "")}`;
  const parts = [text.join("\r\n")];
  for (const a of m.attachments) {
    const ascii = /^[\x20-\x7e]*$/.test(a.filename) && !/["\\]/.test(a.filename);
    const name = ascii ? `filename="${a.filename}"` : `filename*=UTF-8''${encodeURIComponent(a.filename)}`;
    parts.push(
      [
        `Content-Type: ${a.contentType}`,
        `Content-Disposition: attachment; ${name}`,
        "Content-Transfer-Encoding: base64",
        "",
        base64Lines(a.content),
      ].join("\r\n"),
    );
  }
  return [
    ...head,
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    "",
    ...parts.map((p) => `--${boundary}\r\n${p}`),
    `--${boundary}--`,
    "",
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
