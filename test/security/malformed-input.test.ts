import { describe, expect, it } from "vitest";
import { call, expectStatus, newAccount, type TestAccount } from "../helpers";
import { stored } from "../stored";
import { sampleTask } from "../tasks/helpers";

const count = async (sql: string, ...params: unknown[]) =>
  (await stored
    .prepare(sql)
    .bind(...params)
    .first<{ n: number }>())!.n;

const uploads = (acc: TestAccount) =>
  count("SELECT COUNT(*) AS n FROM file_uploads WHERE account_id = ?", acc.account.id);
const tasks = (acc: TestAccount) =>
  count("SELECT COUNT(*) AS n FROM tasks WHERE account_id = ?", acc.account.id);

describe("malformed input is answered 400 and writes nothing", () => {
  it("refuses a body that is not valid UTF-8", async () => {
    const acc = await newAccount();
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{"file_name":"a'),
      0xff,
      0xfe,
      ...new TextEncoder().encode('.txt","file_type":"text/plain"}'),
    ]);
    const r = await call("/file_uploads/", {
      token: acc.admin.token,
      raw: bytes,
      method: "POST",
      headers: { "Content-Type": "application/json" },
    });
    expectStatus(r, 400);
    expect(r.body.code).toBe("parse_error");
    expect(await uploads(acc)).toBe(0);
  });

  it("refuses a lone surrogate and NUL in names and identifiers as field errors", async () => {
    const acc = await newAccount();
    const lone = await call("/file_uploads/", {
      token: acc.admin.token,
      raw: '{"file_name":"\\ud800.txt","file_type":"text/plain"}',
      method: "POST",
      headers: { "Content-Type": "application/json" },
    });
    expectStatus(lone, 400);
    expect(lone.body.file_name[0]).toMatch(/surrogate/);
    const nul = await call("/file_uploads/", {
      token: acc.admin.token,
      body: { file_name: "a\u0000.txt", file_type: "text/plain" },
    });
    expectStatus(nul, 400);
    expect(nul.body.file_name).toEqual(["Null characters are not allowed."]);
    expect(await uploads(acc)).toBe(0);
    const ext = await call("/contact_addresses/", {
      token: acc.admin.token,
      body: { external_id: "x\u0000y", address: { raw_address: "Tallinn" } },
    });
    expectStatus(ext, 400);
    expect(ext.body.external_id).toBeTruthy();
    expect(
      await count("SELECT COUNT(*) AS n FROM contact_addresses WHERE account_id = ?", acc.account.id),
    ).toBe(0);
  });

  it("refuses malformed JSON with parse_error", async () => {
    const acc = await newAccount();
    const r = await call("/file_uploads/", {
      token: acc.admin.token,
      raw: '{"file_name": ',
      method: "POST",
      headers: { "Content-Type": "application/json" },
    });
    expectStatus(r, 400);
    expect(r.body.code).toBe("parse_error");
  });

  it("caps free-form JSON per field, naming the field", async () => {
    const acc = await newAccount();
    const big = { blob: "x".repeat(70 * 1024) };
    const r = await call("/tasks/", { token: acc.admin.token, body: sampleTask(acc, { metafields: big }) });
    expectStatus(r, 400);
    expect(r.body.metafields[0]).toMatch(/no more than 65536 bytes/);
    expect(await tasks(acc)).toBe(0);
    // Within an array body, the error is aligned with the item.
    const orders = await call("/orders/", {
      token: acc.admin.token,
      body: [{ external_id: "ok-1" }, { external_id: "big-1", metafields: big }],
    });
    expectStatus(orders, 400);
    expect(orders.body[0]).toEqual({});
    expect(orders.body[1].metafields).toBeTruthy();
  });

  it("refuses timestamps outside 1970..2099", async () => {
    const acc = await newAccount();
    for (const t of ["0000-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2100-01-01T00:00:00Z"]) {
      const r = await call("/tasks/", {
        token: acc.admin.token,
        body: sampleTask(acc, { complete_after: t }),
      });
      expectStatus(r, 400);
      expect(r.body.complete_after).toBeTruthy();
    }
    expect(await tasks(acc)).toBe(0);
  });

  it("echoes at most 64 characters of an unknown Accept-Timezone", async () => {
    const acc = await newAccount();
    const r = await call("/users/me/", {
      token: acc.admin.token,
      headers: { "Accept-Timezone": "X".repeat(5000) },
    });
    expectStatus(r, 400);
    expect(r.text.length).toBeLessThan(300);
  });
});

describe("response headers", () => {
  it("API answers are not cacheable nor sniffable", async () => {
    const acc = await newAccount();
    for (const r of [
      await call("/authenticate/", { body: { username: acc.admin.email, password: acc.admin.password } }),
      await call("/users/me/", { token: acc.admin.token }),
      await call("/nowhere/"),
    ]) {
      expect(r.headers.get("Cache-Control")).toBe("no-store");
      expect(r.headers.get("X-Content-Type-Options")).toBe("nosniff");
    }
  });

  it("answers the round-two findings with 400s that name the field or the limit", async () => {
    const acc = await newAccount();
    const deep = `${"[".repeat(4000)}${"]".repeat(4000)}`;
    for (const [path, token] of [
      ["/authenticate/", undefined],
      ["/tasks/", acc.admin.token],
    ] as const) {
      const r = await call(path, {
        token,
        raw: deep,
        method: "POST",
        headers: { "Content-Type": "application/json" },
      });
      expectStatus(r, 400);
      expect(r.body).toMatchObject({
        code: "parse_error",
        detail: expect.stringMatching(/deeper than 64 levels/),
      });
    }
    const huge = await call("/trackers/", {
      token: acc.admin.token,
      body: { tasks: Array(150_000).fill({}) },
    });
    expectStatus(huge, 400);
    expect(huge.body.tasks[0]).toMatch(/no more than 10000 items/);
    const many = await call("/trackers/", { token: acc.admin.token, body: { tasks: Array(5000).fill({}) } });
    expectStatus(many, 400);
    expect(many.body.non_field_errors[0]).toBe("5000 errors; the first 100 are shown.");
    for (const method of ["POST", "PUT"] as const) {
      const route =
        method === "POST"
          ? "/routes/"
          : `/routes/${(await call("/routes/", { token: acc.admin.token, body: { name: "r" } })).body.id}/`;
      for (const column of ["start_address", "end_address"]) {
        const r = await call(route, { method, token: acc.admin.token, body: { name: "r", [column]: {} } });
        expectStatus(r, 400);
        expect(r.body[column]).toEqual({ non_field_errors: ["Give raw_address or location."] });
      }
    }
    const client = await call("/clients/", { token: acc.admin.token, body: { name: "Kept" } });
    const patched = await call(`/clients/${client.body.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: {},
    });
    expectStatus(patched, 200);
    expect(patched.body.name).toBe("Kept");
  });
});
