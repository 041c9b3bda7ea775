import { expect } from "vitest";
import { call, expectStatus } from "../helpers";

/** The token of the newest e-mail of `kind` to `to`, read as an admin through GET /outbox/. */
export async function mailedToken(adminToken: string, to: string, kind: string): Promise<string> {
  const r = await call("/outbox/?page_size=500", { token: adminToken });
  expectStatus(r, 200);
  const mail = r.body.results.filter((m: any) => m.to === to && m.kind === kind).at(-1);
  expect(mail, `${kind} e-mail to ${to}`).toBeTruthy();
  return /token: (\S+)/.exec(mail.text)![1];
}

/** Decodes a JWT's payload (no verification: the service verifies; tests read claims). */
export function jwtPayload(token: string): any {
  const part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
  return JSON.parse(atob(part + "=".repeat((4 - (part.length % 4)) % 4)));
}
