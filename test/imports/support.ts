import { expect } from "vitest";
import { finished } from "../exports/support";
import { uploadFile } from "../files/helpers";
import { call, expectStatus, type TestAccount } from "../helpers";

export const csv = (rows: string[][]) =>
  `${rows
    .map((r) => r.map((c) => (/[",\r\n]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c)).join(","))
    .join("\r\n")}\r\n`;

export async function upload(acc: TestAccount, content: string | Uint8Array, name = "import.csv") {
  const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
  return uploadFile(acc.admin.token, name, "text/csv", bytes);
}

/** Uploads the file, posts the import and waits for it to finish. */
export async function runImport(
  acc: TestAccount,
  kind: string,
  content: string | Uint8Array,
  extra: Record<string, unknown> = {},
) {
  const fu = await upload(acc, content);
  const r = await call("/imports/", { token: acc.admin.token, body: { kind, file: fu.url, ...extra } });
  expectStatus(r, 202);
  expect(r.body.state).toBe("queued");
  return finished(acc, r.body.url);
}

export async function listAll(acc: TestAccount, path: string) {
  const out: any[] = [];
  let url: string | null = path;
  while (url) {
    const r = await call(url, { token: acc.admin.token });
    expectStatus(r, 200);
    out.push(...r.body.results);
    url = r.body.next;
  }
  return out;
}
