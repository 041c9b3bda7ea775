import { describe, expect, it } from "vitest";
import { addUser, call, defineMetafields, expectStatus, newAccount } from "../helpers";
import { csv, listAll, runImport, upload } from "./support";

const HEADER = [
  "category",
  "description",
  "address.raw_address",
  "address.latitude",
  "address.longitude",
  "contact.name",
  "contact.phones",
];

describe("POST /imports/ tasks (contract §21)", () => {
  it("creates tasks through the task service, tagged with the import", async () => {
    const acc = await newAccount();
    await defineMetafields(acc, "tasks", { size: "integer", fragile: "boolean" });
    const done = await runImport(
      acc,
      "tasks",
      csv([
        [...HEADER, "metafields.size", "metafields.fragile", "id", "state"],
        [
          "drop_off",
          "First",
          "Depot",
          "59.44",
          "24.75",
          "Ann",
          "+3725551234",
          "'-5",
          "true",
          "ignored",
          "completed",
        ],
        ["pick_up", "Second\nline", "Yard", "59.4", "24.7", "", '["+1","+2"]', "", "", "", ""],
      ]),
    );
    expect(done).toMatchObject({
      state: "completed",
      total_rows: 2,
      processed_rows: 2,
      created: 2,
      updated: 0,
      failed: 0,
      errors: [],
      dry_run: false,
    });
    const tasks = await listAll(acc, `/tasks/?task_import=${done.id}`);
    expect(tasks).toHaveLength(2);
    const first = tasks.find((t: any) => t.description === "First");
    expect(first).toMatchObject({
      category: "drop_off",
      state: "unassigned",
      metafields: { size: -5, fragile: true },
      contact: { name: "Ann", phones: ["+3725551234"] },
      address: { raw_address: "Depot", location: { type: "Point", coordinates: [24.75, 59.44] } },
    });
    const second = tasks.find((t: any) => t.category === "pick_up");
    expect(second.description).toBe("Second\nline");
    expect(second.contact.phones).toEqual(["+1", "+2"]);
    // By URL too.
    expect(await listAll(acc, `/tasks/?task_import=${encodeURIComponent(done.url)}`)).toHaveLength(2);
  });

  it("reports row errors with spreadsheet row numbers and applies the valid rows", async () => {
    const acc = await newAccount();
    await defineMetafields(acc, "tasks", { size: "integer" });
    const done = await runImport(
      acc,
      "tasks",
      csv([
        ["category", "address.raw_address", "metafields.size", "duration"],
        ["drop_off", "A", "1", "00:10:00"],
        ["flying", "B", "2", ""],
        ["drop_off", "", "x", "10 min"],
        ["drop_off", "D", "4", ""],
      ]),
    );
    expect(done).toMatchObject({ state: "completed", total_rows: 4, created: 2, failed: 2 });
    const rows = new Set(done.errors.map((e: any) => e.row));
    expect([...rows].sort()).toEqual([3, 4]);
    expect(done.errors.find((e: any) => e.row === 3).field).toBe("category");
    const fields = done.errors.filter((e: any) => e.row === 4).map((e: any) => e.field);
    expect(fields).toContain("duration");
    expect(await listAll(acc, `/tasks/?task_import=${done.id}`)).toHaveLength(2);
  });

  it("assignee.email names a user of the account (the task starts assigned); an unknown e-mail is a row error", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const done = await runImport(
      acc,
      "tasks",
      csv([
        ["category", "address.raw_address", "assignee.email", "assignee.name"],
        ["drop_off", "A", worker.email.toUpperCase(), "ignored"],
        ["drop_off", "B", "nobody@example.test", ""],
      ]),
    );
    expect(done).toMatchObject({ created: 1, failed: 1 });
    expect(done.errors).toEqual([
      { row: 3, field: "assignee.email", message: "No user of this account has this e-mail." },
    ]);
    const [t] = await listAll(acc, `/tasks/?task_import=${done.id}`);
    expect(t).toMatchObject({ assignee: worker.user, state: "assigned" });
  });

  it("validates metafields against the account's definitions", async () => {
    const acc = await newAccount();
    await defineMetafields(acc, "tasks", { size: "integer" });
    const done = await runImport(
      acc,
      "tasks",
      csv([
        ["category", "address.raw_address", "metafields.size"],
        ["drop_off", "A", "1.5"],
      ]),
    );
    expect(done).toMatchObject({ created: 0, failed: 1 });
    expect(done.errors[0]).toMatchObject({ row: 2, field: "metafields.size" });
  });

  it("dry_run checks every row and applies nothing", async () => {
    const acc = await newAccount();
    const done = await runImport(
      acc,
      "tasks",
      csv([
        ["category", "address.raw_address"],
        ["drop_off", "A"],
        ["nope", "B"],
      ]),
      { dry_run: true },
    );
    expect(done).toMatchObject({ state: "completed", dry_run: true, created: 1, failed: 1 });
    expect(done.errors[0]).toMatchObject({ row: 3, field: "category" });
    expect(await listAll(acc, "/tasks/")).toHaveLength(0);
  });

  it("accepts a BOM, CRLF or LF, quoted newlines, and counts blank lines as rows", async () => {
    const acc = await newAccount();
    const text = '\uFEFFcategory,description,address.raw_address\n"drop_off","a\r\nb",X\n\nnope,c,Y\n';
    const done = await runImport(acc, "tasks", text);
    expect(done).toMatchObject({ total_rows: 2, created: 1, failed: 1 });
    expect(done.errors[0].row).toBe(4);
    const [t] = await listAll(acc, `/tasks/?task_import=${done.id}`);
    expect(t.description).toBe("a\r\nb");
  });

  it("400s: unknown or repeated columns, a file never uploaded, another account's, not UTF-8 in the header", async () => {
    const acc = await newAccount();
    const other = await newAccount();
    const post = (body: unknown) => call("/imports/", { token: acc.admin.token, body });
    const unknown = await upload(acc, "category,colour,metafields.nope\r\ndrop_off,red,1\r\n");
    const r1 = await post({ kind: "tasks", file: unknown.url });
    expectStatus(r1, 400);
    expect(r1.body.file).toEqual(["Unknown columns: colour, metafields.nope."]);
    const twice = await upload(acc, "category,category\r\n");
    expect((await post({ kind: "tasks", file: twice.url })).body.file).toEqual([
      "Columns listed more than once: category.",
    ]);
    const noExt = await upload(acc, "category,address.raw_address\r\n");
    expect((await post({ kind: "orders", file: noExt.url })).body.file).toEqual([
      "An orders import needs the column order.external_id.",
    ]);
    const pending = await call("/file_uploads/", {
      token: acc.admin.token,
      body: { file_name: "x.csv", file_type: "text/csv" },
    });
    const r2 = await post({ kind: "tasks", file: pending.body.url });
    expectStatus(r2, 400);
    expect(r2.body.file).toEqual(["The file has not been uploaded."]);
    const theirs = await upload(other, "category\r\n");
    const r3 = await post({ kind: "tasks", file: theirs.url });
    expectStatus(r3, 400);
    expect(r3.body.file).toEqual(["Invalid hyperlink - Object does not exist."]);
    const latin1 = await upload(acc, new Uint8Array([0x63, 0x61, 0x74, 0xe9, 0x0d, 0x0a]));
    expect((await post({ kind: "tasks", file: latin1.url })).body.file).toEqual([
      "The file is not valid UTF-8 text.",
    ]);
    const bad = await post({ kind: "widgets", file: unknown.url });
    expectStatus(bad, 400);
    const worker = await addUser(acc, "worker");
    const upload2 = await upload(acc, "category\r\n");
    expectStatus(
      await call("/imports/", { token: worker.token, body: { kind: "tasks", file: upload2.url } }),
      403,
    );
    expect(await listAll(acc, "/imports/")).toHaveLength(0);
  });

  it("fails with a clear error and applies nothing: invalid UTF-8 after the header, broken CSV", async () => {
    const acc = await newAccount();
    // The POST reads the first 64 KiB (the header); a bad byte past them fails the import.
    const head = new TextEncoder().encode(
      `category,address.raw_address\r\n${"drop_off,A\r\n".repeat(7000)}drop_off,`,
    );
    const bytes = new Uint8Array([...head, 0xff, 0xfe, 0x0d, 0x0a]);
    const done = await runImport(acc, "tasks", bytes);
    expect(done.state).toBe("failed");
    expect(done.error_message).toMatch(/not valid UTF-8/);
    expect(done.created).toBe(0);
    const broken = await runImport(acc, "tasks", 'category,address.raw_address\r\ndrop_off,"open\r\n');
    expect(broken.state).toBe("failed");
    expect(broken.errors).toEqual([{ row: 2, field: null, message: "The file ends inside a quoted field." }]);
    expect(await listAll(acc, "/tasks/")).toHaveLength(0);
  });
});

describe("POST /imports/ orders and contact addresses (contract §21)", () => {
  it("groups rows by order.external_id (first row's order fields) and upserts", async () => {
    const acc = await newAccount();
    const rows = [
      ["order.external_id", "order.reference", "category", "address.raw_address", "description"],
      ["O-1", "First ref", "pick_up", "A", "o1 t1"],
      ["O-2", "Second", "drop_off", "B", "o2 t1"],
      ["O-1", "ignored (not the first row)", "drop_off", "C", "o1 t2"],
    ];
    const done = await runImport(acc, "orders", csv(rows));
    expect(done).toMatchObject({ state: "completed", total_rows: 3, created: 2, updated: 0, failed: 0 });
    const orders = await listAll(acc, "/orders/");
    const o1 = orders.find((o: any) => o.external_id === "O-1");
    expect(o1.reference).toBe("First ref");
    expect(o1.tasks).toHaveLength(2);
    const tasks = await listAll(acc, `/tasks/?order=${o1.id}`);
    expect(tasks.map((t: any) => t.description).sort()).toEqual(["o1 t1", "o1 t2"]);
    expect(await listAll(acc, `/tasks/?task_import=${done.id}`)).toHaveLength(3);
    // Again: the same orders are updated, no task is duplicated.
    const again = await runImport(acc, "orders", csv(rows));
    expect(again).toMatchObject({ created: 0, updated: 2, failed: 0 });
    expect(await listAll(acc, "/tasks/")).toHaveLength(3);
    // A bad task row fails its whole order (one transaction), reported on its row.
    const bad = await runImport(
      acc,
      "orders",
      csv([
        ["order.external_id", "category", "address.raw_address"],
        ["O-3", "drop_off", "A"],
        ["O-3", "bogus", "B"],
        ["", "drop_off", "C"],
      ]),
    );
    expect(bad).toMatchObject({ created: 0, failed: 3 });
    expect(bad.errors).toEqual([
      { row: 3, field: "category", message: expect.any(String) },
      { row: 4, field: "order.external_id", message: "This field is required." },
    ]);
  });

  it("upserts contact addresses by external_id, metafields validated", async () => {
    const acc = await newAccount();
    await defineMetafields(acc, "contact_addresses", { gate_code: "string" });
    const existing = await call("/contact_addresses/", {
      token: acc.admin.token,
      body: { external_id: "CA-1", address: { raw_address: "Old street" } },
    });
    expectStatus(existing, 201);
    const done = await runImport(
      acc,
      "contact_addresses",
      csv([
        ["external_id", "address.raw_address", "contact.name", "metafields.gate_code"],
        ["CA-1", "New street", "Ann", "=1+1"],
        ["CA-2", "Other street", "Bob", ""],
        ["", "No id street", "", ""],
        ["CA-3", "", "Cy", ""],
      ]).replace("=1+1", "'=1+1"),
    );
    expect(done).toMatchObject({ state: "completed", created: 2, updated: 1, failed: 1 });
    expect(done.errors[0]).toMatchObject({ row: 5, field: "address" });
    const all = await listAll(acc, "/contact_addresses/");
    const ca1 = all.find((c: any) => c.external_id === "CA-1");
    expect(ca1).toMatchObject({
      id: existing.body.id,
      contact: { name: "Ann" },
      metafields: { gate_code: "=1+1" },
    });
    expect(ca1.address.raw_address).toBe("New street");
    expect(all).toHaveLength(3);
  });
});
