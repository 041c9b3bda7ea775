// Outbound e-mail: one interface, two providers, chosen by settings (the geocoding folder's
// pattern). Invitations and activations go through it; later features (e-mail verification,
// notifications) reuse it.
//
//   EMAIL_PROVIDER  "local" (development and tests: stored in D1, read at GET /outbox/) or
//                   "workers" (the `send_email` binding named EMAIL, from EMAIL_FROM)
//   EMAIL_FROM      sender address for "workers"

import { LocalEmailSender } from "./local";
import { EmailError, type EmailSender } from "./types";
import { type SendEmailBinding, WorkersEmailSender } from "./workers";

export { LocalEmailSender } from "./local";
export { type EmailAttachment, EmailError, type EmailMessage, type EmailSender } from "./types";
export { buildMime, WorkersEmailSender } from "./workers";

export type EmailEnv = {
  DB: D1Database;
  FILES?: R2Bucket;
  EMAIL_PROVIDER?: string;
  EMAIL_FROM?: string;
  EMAIL?: SendEmailBinding;
};

export const EMAIL_PROVIDERS = ["local", "workers"] as const;

export function emailProviderName(env: EmailEnv): string {
  return (env.EMAIL_PROVIDER ?? "").trim().toLowerCase() || "local";
}

/** True when messages are kept locally (the outbox is readable). */
export const isLocalEmail = (env: EmailEnv) => emailProviderName(env) === "local";

/** The configured provider; an unknown name or a missing binding is a deployment mistake. */
export function emailSenderFromEnv(env: EmailEnv): EmailSender {
  const provider = emailProviderName(env);
  switch (provider) {
    case "local":
      return new LocalEmailSender(env.DB, env.FILES);
    case "workers": {
      if (!env.EMAIL) throw new EmailError('EMAIL_PROVIDER is "workers" but no `send_email` binding EMAIL');
      const from = (env.EMAIL_FROM ?? "").trim();
      if (!from.includes("@")) throw new EmailError('EMAIL_PROVIDER is "workers" but EMAIL_FROM is empty');
      // `cloudflare:email` exists only inside workerd; imported lazily so the module loads anywhere.
      return new WorkersEmailSender(
        env.EMAIL,
        from,
        async () => (await import("cloudflare:email")).EmailMessage,
      );
    }
    default:
      throw new EmailError(
        `Unknown EMAIL_PROVIDER "${provider}" (expected one of: ${EMAIL_PROVIDERS.join(", ")})`,
      );
  }
}
