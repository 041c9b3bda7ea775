import { describe, expect, it } from "vitest";
import { buildMime, WorkersEmailSender } from "../../src/services/messaging/email";

/** The parts of a multipart body (RFC 2046 §5.1.1), each as [headers, decoded body]. */
function parts(raw: string) {
  const boundary = /boundary="([^"]+)"/.exec(raw)![1];
  const body = raw.slice(raw.indexOf("\r\n\r\n") + 4);
  return body
    .split(`--${boundary}`)
    .slice(1, -1)
    .map((p) => {
      const [head, data] = p.replace(/^\r\n/, "").split("\r\n\r\n");
      const bytes = Uint8Array.from(atob(data.replace(/\r\n/g, "")), (c) => c.charCodeAt(0));
      return { head, bytes };
    });
}

describe("e-mail MIME (RFC 5322, RFC 2046)", () => {
  it("a message without attachments stays one text/plain part", () => {
    const raw = buildMime(
      "a@b.test",
      { to: "c@d.test", subject: "Hei", text: "Hello", kind: "x", accountId: null },
      "id@b",
    );
    expect(raw).toContain('Content-Type: text/plain; charset="utf-8"');
    expect(raw).not.toContain("multipart");
  });

  it("attachments make a multipart/mixed body whose parts decode to the bytes sent", () => {
    const pdf = new Uint8Array(300).map((_, i) => (i * 7) % 256);
    const raw = buildMime(
      "a@b.test",
      {
        to: "c@d.test",
        subject: "Toimitettu ✓",
        text: "Paketti on perillä.",
        kind: "notification",
        accountId: null,
        attachments: [
          { filename: "pod.pdf", contentType: "application/pdf", content: pdf },
          { filename: "kuitti ä.pdf", contentType: "application/pdf", content: pdf.slice(0, 3) },
        ],
      },
      "id@b",
    );
    expect(raw).toMatch(/Subject: =\?UTF-8\?B\?/);
    expect(raw).toContain("Content-Type: multipart/mixed; boundary=");
    const [text, file, other] = parts(raw);
    expect(new TextDecoder().decode(text.bytes)).toBe("Paketti on perillä.");
    expect(file.head).toContain('Content-Disposition: attachment; filename="pod.pdf"');
    expect(file.bytes).toEqual(pdf);
    expect(other.head).toContain("filename*=UTF-8''kuitti%20%C3%A4.pdf");
    expect(raw.split("\r\n").every((l) => l.length <= 998)).toBe(true);
  });

  it("the send_email provider hands the binding the MIME message with its attachment", async () => {
    const seen: { from: string; to: string; raw: string }[] = [];
    class Msg {
      constructor(
        public from: string,
        public to: string,
        public raw: string,
      ) {}
    }
    const sender = new WorkersEmailSender(
      { send: async (m) => void seen.push(m as Msg) },
      "noreply@b.test",
      async () => Msg,
    );
    await sender.send({
      to: "c@d.test",
      subject: "POD",
      text: "Attached.",
      kind: "notification",
      accountId: null,
      attachments: [
        { filename: "pod.pdf", contentType: "application/pdf", content: new Uint8Array([37, 80, 68, 70]) },
      ],
    });
    expect(seen).toHaveLength(1);
    expect(parts(seen[0].raw)[1].bytes).toEqual(new Uint8Array([37, 80, 68, 70]));
  });
});
