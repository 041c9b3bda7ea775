import { describe, expect, it } from "vitest";
import { insertTask } from "../factories";
import { call, expectStatus, newAccount } from "../helpers";

/**
 * Issue 52 item 5: a contact's phone becomes a `tel:` link in the apps, so only a phone number is
 * taken (digits, a leading +, spaces, -(). and ;ext=), on every write of a contact, and the
 * OpenAPI document states the rule as a pattern.
 */
const BAD = [
  "javascript:alert(1)",
  "<img src=x onerror=alert(1)>",
  "+358 40 123 4567<b>",
  "call me",
  "+",
  "",
];
const GOOD = ["+358 40 123-4567", "(040) 123.4567", "+1 (555) 010-0100;ext=12", "0401234567"];

describe("contact phones are phone numbers", () => {
  it("POST /tasks/ refuses anything else with a field error, and takes numbers as people write them", async () => {
    const { admin, account } = await newAccount();
    const create = (phones: string[]) =>
      call("/tasks/", {
        token: admin.token,
        body: {
          account: account.url,
          category: "drop_off",
          address: { raw_address: "Tampere" },
          contact: { phones },
        },
      });
    for (const bad of BAD) {
      const r = await create(["+358401234567", bad]);
      expectStatus(r, 400);
      expect(r.body.contact.phones, bad).toEqual({ 1: [expect.stringMatching(/^Enter a phone number/)] });
    }
    const ok = await create(GOOD);
    expectStatus(ok, 201);
    expect(ok.body.contact.phones).toEqual(GOOD);
  });

  it("PATCH /tasks/{id}/ and POST /contact_addresses/ refuse it too", async () => {
    const { admin, account } = await newAccount();
    const task = await insertTask(account.id);
    const patched = await call(`/tasks/${task.id}/`, {
      method: "PATCH",
      token: admin.token,
      body: { contact: { phones: ["javascript:alert(1)"] } },
    });
    expectStatus(patched, 400);
    expect(patched.body.contact.phones).toBeTruthy();
    const saved = await call(`/tasks/${task.id}/`, { token: admin.token });
    expect(saved.body.contact?.phones ?? []).not.toContain("javascript:alert(1)");
    const address = await call("/contact_addresses/", {
      token: admin.token,
      body: { address: { raw_address: "Tampere" }, contact: { phones: ["<script>"] } },
    });
    expectStatus(address, 400);
    expect(address.body.contact.phones).toBeTruthy();
  });

  it("the OpenAPI document states the rule as a pattern", async () => {
    const doc = (await call("/openapi.json")).body;
    const pattern = doc.components.schemas.Contact.properties.phones.items.pattern as string;
    expect(pattern).toBeTruthy();
    const re = new RegExp(pattern);
    for (const good of GOOD) expect(re.test(good), good).toBe(true);
    for (const bad of BAD) expect(re.test(bad), bad).toBe(false);
  });
});
