import { describe, expect, it } from "vitest";
import { exportFile } from "../exports/support";
import { call, defineMetafields, expectStatus, newAccount, type TestAccount } from "../helpers";
import { listAll, runImport } from "./support";

/** Columns that describe the data itself (not ids, times of writing or the state). */
const DATA = [
  "category",
  "description",
  "address.raw_address",
  "address.latitude",
  "address.longitude",
  "contact.name",
  "contact.company",
  "contact.phones",
  "contact.emails",
  "contact.notes",
  "complete_after",
  "complete_before",
  "duration",
  "order.external_id",
  "order.reference",
  "metafields.size",
  "metafields.note",
];

async function prepared() {
  const acc = await newAccount();
  await defineMetafields(acc, "tasks", { size: "integer", note: "text" });
  return acc;
}

const sorted = (text: string) => {
  const [head, ...rows] = text.trimEnd().split("\r\n");
  return [head, ...rows.sort()].join("\r\n");
};

async function populate(acc: TestAccount) {
  const task = (i: number, extra: Record<string, unknown> = {}) => ({
    category: i % 2 ? "drop_off" : "pick_up",
    description: i === 0 ? '=cmd|" /C calc"!A0, "quoted"\nnew line' : `Task ${i}`,
    address: { raw_address: `Street ${i}`, location: { type: "Point", coordinates: [24.7 + i / 100, 59.4] } },
    contact: { name: `-Name ${i}`, phones: [`+37255500${i}`], emails: [`c${i}@example.test`], notes: "n, o" },
    complete_after: "2030-01-02T08:00:00.000Z",
    complete_before: "2030-01-02T17:30:00.000Z",
    duration: "00:15:00",
    metafields: { size: i - 1, note: `@note ${i}` },
    ...extra,
  });
  for (const ext of ["O-1", "O-2"]) {
    const r = await call("/orders/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        external_id: ext,
        reference: `Ref ${ext}`,
        tasks_data: [task(0), task(1)],
      },
    });
    expectStatus(r, 201);
  }
}

describe("export → import round trip (contract §21)", () => {
  it("tasks of orders, exported as CSV, re-import into a fresh account as the same data", async () => {
    const a = await prepared();
    await populate(a);
    const exported = await exportFile(a, "/task_exports/", {
      fields: ["id", "state", "created_at", ...DATA],
    });
    const b = await prepared();
    const done = await runImport(b, "orders", exported.text);
    expect(done).toMatchObject({ state: "completed", total_rows: 4, created: 2, failed: 0, errors: [] });
    const again = await exportFile(b, "/task_exports/", { fields: DATA });
    const original = await exportFile(a, "/task_exports/", { fields: DATA });
    expect(sorted(again.text)).toBe(sorted(original.text));
    const orders = await listAll(b, "/orders/");
    expect(orders.map((o: any) => o.reference).sort()).toEqual(["Ref O-1", "Ref O-2"]);
  });

  it("tasks deleted after an export come back from it (same account, kind tasks)", async () => {
    const a = await prepared();
    await populate(a);
    const fields = DATA.filter((f) => !f.startsWith("order."));
    const before = await exportFile(a, "/task_exports/", { fields });
    for (const t of await listAll(a, "/tasks/")) {
      expectStatus(await call(`/tasks/${t.id}/`, { method: "DELETE", token: a.admin.token }), 204);
    }
    const done = await runImport(a, "tasks", before.text);
    expect(done).toMatchObject({ created: 4, failed: 0 });
    const after = await exportFile(a, "/task_exports/", { fields });
    expect(sorted(after.text)).toBe(sorted(before.text));
  });

  it("contact addresses, exported as CSV, re-import into a fresh account as the same data", async () => {
    const fields = [
      "external_id",
      "address.raw_address",
      "address.latitude",
      "address.longitude",
      "contact.name",
      "contact.phones",
      "contact.emails",
      "metafields.gate_code",
      "metafields.floors",
    ];
    const prepare = async () => {
      const acc = await newAccount();
      await defineMetafields(acc, "contact_addresses", { gate_code: "text", floors: "integer" });
      return acc;
    };
    const a = await prepare();
    for (const [i, code] of ["=1+1", "+99", "plain, with comma", '"quoted"\nline'].entries()) {
      const r = await call("/contact_addresses/", {
        token: a.admin.token,
        body: {
          account: a.account.url,
          external_id: `CA-${i}`,
          address: {
            raw_address: `Street ${i}`,
            location: { type: "Point", coordinates: [24.7 + i / 100, 59.4] },
          },
          contact: { name: `@Name ${i}`, phones: [`+37255500${i}`], emails: [`c${i}@example.test`] },
          metafields: { gate_code: code, floors: i - 1 },
        },
      });
      expectStatus(r, 201);
    }
    const exported = await exportFile(a, "/contact_address_exports/", {
      fields: ["id", "created_at", ...fields],
    });
    const b = await prepare();
    const done = await runImport(b, "contact_addresses", exported.text);
    expect(done).toMatchObject({ state: "completed", total_rows: 4, created: 4, failed: 0, errors: [] });
    const again = await exportFile(b, "/contact_address_exports/", { fields });
    const original = await exportFile(a, "/contact_address_exports/", { fields });
    expect(sorted(again.text)).toBe(sorted(original.text));
    // Formula-looking values come back as they were written, not with the export's quote.
    const read = await listAll(b, "/contact_addresses/");
    expect(read.find((c: any) => c.external_id === "CA-0").metafields).toEqual({
      gate_code: "=1+1",
      floors: -1,
    });
    // Re-importing the same file updates the same addresses, creating none.
    expect(await runImport(b, "contact_addresses", exported.text)).toMatchObject({
      created: 0,
      updated: 4,
      failed: 0,
    });
  });
});
