/** A file sent with a message (e.g. the proof-of-delivery PDF of a `task_completed` notification). */
export type EmailAttachment = { filename: string; contentType: string; content: Uint8Array };

/** One outbound e-mail (plain text: links and tokens, nothing that needs HTML). */
export type EmailMessage = {
  to: string;
  subject: string;
  text: string;
  /** What the message is for (`activation`, `invitation`, ...): kept by the local provider. */
  kind: string;
  /** The account the message is sent on behalf of; the local outbox shows it to that account's admins. */
  accountId: string | null;
  attachments?: EmailAttachment[];
};

/**
 * Sends e-mail. Resolves once the provider has accepted the message; rejects with an
 * `EmailError` when it cannot (a misconfiguration or the provider refusing the message).
 */
export interface EmailSender {
  /** `"local"` or `"workers"`. */
  readonly name: string;
  send(message: EmailMessage): Promise<void>;
}

export class EmailError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "EmailError";
  }
}
