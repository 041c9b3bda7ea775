import { uuidv7 } from "../../../lib/ids";
import type { EmailMessage, EmailSender } from "./types";

/**
 * Development and tests: nothing leaves the machine; every message is a row of
 * `outbound_emails`, readable at `GET /outbox/` (admins of the message's account) and by tests.
 */
export class LocalEmailSender implements EmailSender {
  readonly name = "local";
  constructor(private readonly db: D1Database) {}

  async send(m: EmailMessage): Promise<void> {
    await this.db
      .prepare(
        "INSERT INTO outbound_emails (id, account_id, kind, to_address, subject, text, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      )
      .bind(uuidv7(), m.accountId, m.kind, m.to, m.subject, m.text, Date.now())
      .run();
  }
}
