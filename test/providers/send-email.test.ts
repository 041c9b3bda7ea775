import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EmailError, emailSenderFromEnv } from "../../src/services/messaging/email";
import { stored } from "../stored";

// The Workers provider through the real `send_email` binding of wrangler.jsonc, as the local
// runtime provides it: the binding parses the raw RFC 5322 message (a message it cannot parse,
// without a Message-ID, or whose From header differs from the envelope is refused), as Email
// Routing does.
const workers = (from = "noreply@example.com") =>
  emailSenderFromEnv({ DB: stored, EMAIL_PROVIDER: "workers", EMAIL_FROM: from, EMAIL: env.EMAIL });

describe("e-mail through the send_email binding", () => {
  it("hands over a message with a PDF attachment that the binding accepts", async () => {
    const sender = workers();
    expect(sender.name).toBe("workers");
    await expect(
      sender.send({
        to: "aino@example.com",
        subject: "Toimitettu ✓",
        text: "Paketti on perillä.",
        kind: "notification",
        accountId: null,
        attachments: [
          {
            filename: "pod.pdf",
            contentType: "application/pdf",
            content: new TextEncoder().encode("%PDF-1.7\n"),
          },
        ],
      }),
    ).resolves.toBeUndefined();
  });

  it("a deployment without a sender address is a configuration error", () => {
    expect(() => workers("")).toThrow(EmailError);
    expect(() =>
      emailSenderFromEnv({ DB: stored, EMAIL_PROVIDER: "workers", EMAIL_FROM: "a@b.test" }),
    ).toThrow(EmailError);
  });
});
