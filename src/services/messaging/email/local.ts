import { uuidv7 } from "../../../lib/ids";
import { outboxAttachmentKey } from "../../../s3/keys";
import type { EmailMessage, EmailSender } from "./types";

/**
 * Development and tests: nothing leaves the machine; every message is a row of
 * `outbound_emails`, readable at `GET /outbox/` (admins of the message's account) and by tests.
 * Attachments go to R2 under `outbox/<random id>/` (the key is the capability, as for every
 * stored file), so a developer can open the PDF a customer would have received.
 */
export class LocalEmailSender implements EmailSender {
  readonly name = "local";
  constructor(
    private readonly db: D1Database,
    private readonly files?: R2Bucket,
  ) {}

  async send(m: EmailMessage): Promise<void> {
    const attachments: { file_name: string; content_type: string; size: number; key: string }[] = [];
    for (const a of m.attachments ?? []) {
      if (!this.files) throw new Error("The local e-mail provider needs the FILES bucket for attachments.");
      const key = outboxAttachmentKey(crypto.randomUUID(), a.filename);
      await this.files.put(key, a.content, { httpMetadata: { contentType: a.contentType } });
      attachments.push({
        file_name: a.filename,
        content_type: a.contentType,
        size: a.content.byteLength,
        key,
      });
    }
    await this.db
      .prepare(
        "INSERT INTO outbound_emails (id, account_id, kind, to_address, subject, text, attachments, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .bind(uuidv7(), m.accountId, m.kind, m.to, m.subject, m.text, JSON.stringify(attachments), Date.now())
      .run();
  }
}
