import { describe, expect, it } from "vitest";
import { parseCsv } from "../../src/formats/csv";
import { addUser, call, defineMetafields, expectStatus, newAccount, type TestAccount } from "../helpers";
import { exportFile, finished } from "./support";

const point = (lon: number, lat: number, raw: string) => ({
  raw_address: raw,
  location: { type: "Point", coordinates: [lon, lat] },
});

async function task(acc: TestAccount, body: Record<string, unknown>) {
  const r = await call("/tasks/", {
    token: acc.admin.token,
    body: {
      account: acc.account.url,
      category: "drop_off",
      address: point(24.75, 59.44, "Depot 1"),
      ...body,
    },
  });
  expectStatus(r, 201);
  return r.body;
}

describe("/task_exports/ (contract §21)", () => {
  it("writes RFC 4180 CSV byte for byte: header, CRLF, quoting, dotted fields, metafields, formula escapes", async () => {
    const acc = await newAccount();
    await defineMetafields(acc, "tasks", { size: "integer", fragile: "boolean" });
    const order = await call("/orders/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        external_id: "ORD-1",
        reference: "Ref, with comma",
        tasks_data: [{ category: "pick_up", address: point(24.7, 59.4, "Warehouse"), description: "Pick" }],
      },
    });
    expectStatus(order, 201);
    await task(acc, {
      description: 'Say "hi"\nthen leave',
      contact: { name: "=HYPERLINK(evil)", phones: ["+3725551234", "+3725550000"] },
      metafields: { size: -5, fragile: true },
    });
    const {
      text,
      headers,
      export: done,
    } = await exportFile(acc, "/task_exports/", {
      fields: [
        "description",
        "address.raw_address",
        "address.latitude",
        "address.longitude",
        "contact.name",
        "contact.phones",
        "metafields.size",
        "metafields.fragile",
        "order.external_id",
        "order.reference",
      ],
    });
    expect(done.row_count).toBe(2);
    expect(headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    expect(text).toBe(
      "description,address.raw_address,address.latitude,address.longitude,contact.name,contact.phones,metafields.size,metafields.fragile,order.external_id,order.reference\r\n" +
        'Pick,Warehouse,59.4,24.7,,[],,,ORD-1,"Ref, with comma"\r\n' +
        '"Say ""hi""\nthen leave",Depot 1,59.44,24.75,\'=HYPERLINK(evil),"[""+3725551234"",""+3725550000""]",\'-5,true,,\r\n',
    );
    // Reading it back undoes the escapes.
    const rows = parseCsv(text);
    expect(rows[2][4]).toBe("=HYPERLINK(evil)");
    expect(rows[2][6]).toBe("-5");
  });

  it("writes JSON Lines: one flat object a row, values typed", async () => {
    const acc = await newAccount();
    await defineMetafields(acc, "tasks", { size: "integer" });
    await task(acc, { description: "One", metafields: { size: 3 }, contact: { name: "Ann" } });
    const { text, headers } = await exportFile(acc, "/task_exports/", {
      format: "jsonl",
      fields: [
        "description",
        "contact.name",
        "contact.emails",
        "metafields.size",
        "address.location",
        "assignee",
      ],
    });
    expect(headers.get("Content-Type")).toBe("application/jsonl; charset=utf-8");
    expect(text).toBe(
      '{"description":"One","contact.name":"Ann","contact.emails":[],"metafields.size":3,"address.location":{"type":"Point","coordinates":[24.75,59.44]},"assignee":null}\n',
    );
  });

  it("applies the task list's filters and ordering, and assignee.email", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker", "Walt");
    await task(acc, { description: "a" });
    await task(acc, { description: "b", assignee: worker.user });
    await task(acc, { description: "c", assignee: worker.user });
    const { text } = await exportFile(acc, "/task_exports/", {
      fields: ["description", "state", "assignee.email", "assignee.name"],
      filters: { state: "assigned", ordering: "-created_at" },
    });
    expect(text).toBe(
      `description,state,assignee.email,assignee.name\r\nc,assigned,${worker.email},Walt\r\nb,assigned,${worker.email},Walt\r\n`,
    );
  });

  it("writes times in the Accept-Timezone of the request that made the export", async () => {
    const acc = await newAccount();
    await task(acc, { complete_after: "2030-01-02T08:00:00Z" });
    const r = await call("/task_exports/", {
      token: acc.admin.token,
      headers: { "Accept-Timezone": "Europe/Helsinki" },
      body: {
        account: acc.account.url,
        fields: ["complete_after"],
        filters: { complete_after__gte: "2030-01-02T10:00:00" },
      },
    });
    expectStatus(r, 202);
    const done = await finished(acc, r.body.url);
    expect((await call(done.file)).text).toBe("complete_after\r\n2030-01-02T10:00:00.000+02:00\r\n");
  });

  it("has a default column list with the account's metafields", async () => {
    const acc = await newAccount();
    await defineMetafields(acc, "tasks", { size: "integer" });
    await task(acc, { description: "x" });
    const { export: done, text } = await exportFile(acc, "/task_exports/", {});
    expect(done.fields).toContain("metafields.size");
    expect(done.fields.slice(0, 4)).toEqual(["id", "state", "category", "description"]);
    expect(text.split("\r\n")[0]).toBe(done.fields.join(","));
  });

  it("400s: account missing or another's, unknown fields and filters listed, bad filter values", async () => {
    const acc = await newAccount();
    const other = await newAccount();
    const post = (body: unknown) => call("/task_exports/", { token: acc.admin.token, body });
    const noAccount = await post({ fields: ["id"] });
    expectStatus(noAccount, 400);
    expect(noAccount.body.account).toEqual(["This field is required."]);
    const foreign = await post({ account: other.account.url });
    expectStatus(foreign, 400);
    expect(foreign.body.account).toEqual(["Invalid hyperlink - Object does not exist."]);
    const fields = await post({
      account: acc.account.url,
      fields: ["id", "nope", "metafields.undefined_key", "address.zip"],
    });
    expectStatus(fields, 400);
    expect(fields.body.fields).toEqual(["Unknown fields: nope, metafields.undefined_key, address.zip."]);
    const filters = await post({
      account: acc.account.url,
      filters: { state: "assigned", colour: "red", page_size: 5 },
    });
    expectStatus(filters, 400);
    expect(filters.body.filters).toEqual({ page_size: ["Unknown filter."], colour: ["Unknown filter."] });
    const unknown = await post({ account: acc.account.url, filters: { colour: "red" } });
    expectStatus(unknown, 400);
    expect(unknown.body.filters).toEqual({ colour: ["Unknown filter."] });
    const both = await post({ account: acc.account.url, fields: ["id", "nope"], filters: { colour: "red" } });
    expectStatus(both, 400);
    expect(both.body).toEqual({
      fields: ["Unknown fields: nope."],
      filters: { colour: ["Unknown filter."] },
    });
    const badValue = await post({ account: acc.account.url, filters: { state: "flying" } });
    expectStatus(badValue, 400);
    expect(Object.keys(badValue.body.filters)).toEqual(["state"]);
    const list = await call("/task_exports/", { token: acc.admin.token });
    expect(list.body.results).toHaveLength(0);
  });

  it("is for dispatchers; another account's export is 404; the list is per kind", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const r = await call("/task_exports/", { token: acc.admin.token, body: { account: acc.account.url } });
    expectStatus(r, 202);
    expect(r.body).toMatchObject({ state: "queued", row_count: 0, file: null, format: "csv" });
    await finished(acc, r.body.url);
    expectStatus(await call("/task_exports/", { token: worker.token }), 403);
    const other = await newAccount();
    expectStatus(await call(`/task_exports/${r.body.id}/`, { token: other.admin.token }), 404);
    expectStatus(await call(`/contact_address_exports/${r.body.id}/`, { token: acc.admin.token }), 404);
    const list = await call("/task_exports/", { token: acc.admin.token });
    expect(list.body.results.map((x: any) => x.id)).toEqual([r.body.id]);
  });

  it("serves the file with ETag, Range and conditional GET", async () => {
    const acc = await newAccount();
    await task(acc, { description: "ranged" });
    const {
      export: done,
      text,
      headers,
    } = await exportFile(acc, "/task_exports/", { fields: ["description"] });
    expect(text).toBe("description\r\nranged\r\n");
    const etag = headers.get("ETag")!;
    expect(etag).toBeTruthy();
    expect(headers.get("Content-Disposition")).toContain("attachment");
    const part = await call(done.file, { headers: { Range: "bytes=0-10" } });
    expectStatus(part, 206);
    expect(part.text).toBe("description");
    expect(part.headers.get("Content-Range")).toBe(`bytes 0-10/${text.length}`);
    expectStatus(await call(done.file, { headers: { "If-None-Match": etag } }), 304);
  });
});

describe("/contact_address_exports/ (contract §21, interface 2.9.0)", () => {
  it("exports contact addresses with their metafields, filtered by external_id", async () => {
    const acc = await newAccount();
    await defineMetafields(acc, "contact_addresses", { gate_code: "string" });
    for (const [ext, code] of [
      ["CA-1", "1234"],
      ["CA-2", "+99"],
    ]) {
      const r = await call("/contact_addresses/", {
        token: acc.admin.token,
        body: {
          account: acc.account.url,
          external_id: ext,
          address: point(24.75, 59.44, `Street ${ext}`),
          contact: { name: `Name ${ext}` },
          metafields: { gate_code: code },
        },
      });
      expectStatus(r, 201);
    }
    const all = await exportFile(acc, "/contact_address_exports/", {
      fields: ["external_id", "address.raw_address", "contact.name", "metafields.gate_code"],
    });
    expect(all.text).toBe(
      "external_id,address.raw_address,contact.name,metafields.gate_code\r\n" +
        "CA-1,Street CA-1,Name CA-1,1234\r\n" +
        "CA-2,Street CA-2,Name CA-2,'+99\r\n",
    );
    const one = await exportFile(acc, "/contact_address_exports/", {
      fields: ["external_id"],
      filters: { external_id: "CA-2" },
    });
    expect(one.text).toBe("external_id\r\nCA-2\r\n");
    const bad = await call("/contact_address_exports/", {
      token: acc.admin.token,
      body: { account: acc.account.url, fields: ["order.reference"], filters: { state: "x" } },
    });
    expectStatus(bad, 400);
    expect(bad.body.fields).toEqual(["Unknown fields: order.reference."]);
  });
});
