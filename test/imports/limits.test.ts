import { describe, expect, it } from "vitest";
import { call, expectStatus, newAccount } from "../helpers";
import { csv, listAll, runImport, upload } from "./support";

describe("imports that can never succeed fail at once, in words", () => {
  it("a 0-byte file is a 400 on file; nothing is queued", async () => {
    const acc = await newAccount();
    const fu = await upload(acc, new Uint8Array());
    const r = await call("/imports/", { token: acc.admin.token, body: { kind: "tasks", file: fu.url } });
    expectStatus(r, 400);
    expect(r.body.file[0]).toMatch(/empty/);
    expect((await call("/imports/", { token: acc.admin.token })).body.results).toEqual([]);
  });

  it("a 12 MB line fails the import with its row number, nothing applied", async () => {
    const acc = await newAccount();
    const text = csv([
      ["category", "address.raw_address", "description"],
      ["drop_off", "Tallinn", "fine"],
      ["drop_off", "Tallinn", "x".repeat(12 * 1024 * 1024)],
    ]);
    const started = Date.now();
    const done = await runImport(acc, "tasks", text);
    expect(Date.now() - started).toBeLessThan(20_000); // failed at once, not after retries
    expect(done.state).toBe("failed");
    expect(done.error_message).toMatch(/^Row 3 is \d+ KiB long; a row may have at most 256 KiB\./);
    expect(done.errors).toEqual([{ row: 3, field: null, message: expect.stringMatching(/at most 256 KiB/) }]);
    expect(done.error_message).not.toMatch(/SQLITE|D1_ERROR/);
    expect(await listAll(acc, `/tasks/?task_import=${done.id}`)).toHaveLength(0);
  });

  it("a cell nested thousands deep is a row error; the other rows are imported", async () => {
    const acc = await newAccount();
    const deep = `${"[".repeat(3000)}${"]".repeat(3000)}`;
    const done = await runImport(
      acc,
      "tasks",
      csv([
        ["category", "address.raw_address", "address.location", "description"],
        ["drop_off", "Tallinn", deep, "deep"],
        ["drop_off", "Tallinn", "", "plain"],
      ]),
    );
    expect(done).toMatchObject({ state: "completed", created: 1, failed: 1 });
    expect(done.errors).toEqual([
      { row: 2, field: "address.location", message: "Value is nested deeper than 64 levels." },
    ]);
    expect(done.error_message).toBe("");
  });
});
