import { describe, expect, it } from "vitest";
import { addUser, defineMetafields, expectStatus, newAccount, type TestAccount } from "../helpers";
import { api, createTask } from "../tasks/helpers";

const DUPLICATE = { external_id: ["contact address with this external id already exists."] };

async function createCa(acc: TestAccount, body: Record<string, unknown>) {
  const r = await api("/contact_addresses/", { token: acc.admin.token, body });
  expectStatus(r, 201);
  return r.body;
}

describe("/contact_addresses/", () => {
  it("creates a geocoded contact address and reads it back", async () => {
    const acc = await newAccount();
    await defineMetafields(acc, "contact_addresses", { hours: "string" });
    const ca = await createCa(acc, {
      external_id: "store-1",
      address: { raw_address: "Tartu, Estonia" },
      contact: { name: "Store 1", emails: ["s1@example.com"] },
      metafields: { hours: "9-17" },
    });
    expect(ca).toMatchObject({
      url: `https://api.test/contact_addresses/${ca.id}/`,
      account: acc.account.url,
      external_id: "store-1",
      contact: { name: "Store 1", company: "", emails: ["s1@example.com"], phones: [], notes: "" },
      metafields: { hours: "9-17" },
    });
    expect(ca.address).toMatchObject({
      raw_address: "Tartu, Estonia",
      formatted_address: expect.stringMatching(/Tartu/),
      location: { type: "Point", coordinates: [expect.any(Number), expect.any(Number)] },
      geocoded_at: expect.any(String),
      geocode_failed_at: null,
      geocoding_provider: "offline",
    });
    const read = await api(ca.url, { token: acc.admin.token });
    expectStatus(read, 200);
    expect(read.body).toEqual(ca);
    const missing = await api("/contact_addresses/", { token: acc.admin.token, body: { external_id: "x" } });
    expectStatus(missing, 400);
    expect(missing.body).toEqual({ address: ["This field is required."] });
  });

  it("keeps external_id unique per account (400 on the field), not across accounts", async () => {
    const acc = await newAccount();
    const other = await newAccount();
    await createCa(acc, { external_id: "dup", address: { raw_address: "Tartu, Estonia" } });
    const again = await api("/contact_addresses/", {
      token: acc.admin.token,
      body: { external_id: "dup", address: { raw_address: "Narva, Estonia" } },
    });
    expectStatus(again, 400);
    expect(again.body).toEqual(DUPLICATE);
    await createCa(other, { external_id: "dup", address: { raw_address: "Tartu, Estonia" } });
    // Concurrent creations: the unique index lets exactly one through.
    const racers = await Promise.all(
      Array.from({ length: 4 }, () =>
        api("/contact_addresses/", {
          token: acc.admin.token,
          body: { external_id: "race", address: { raw_address: "Tartu, Estonia" } },
        }),
      ),
    );
    expect(racers.map((r) => r.status).sort()).toEqual([201, 400, 400, 400]);
    const second = await createCa(acc, { external_id: "second", address: { raw_address: "Tartu, Estonia" } });
    const rename = await api(second.url, {
      method: "PATCH",
      token: acc.admin.token,
      body: { external_id: "dup" },
    });
    expectStatus(rename, 400);
    expect(rename.body).toEqual(DUPLICATE);
  });

  it("lists with an external_id filter; another account's is 404", async () => {
    const acc = await newAccount();
    const a = await createCa(acc, { external_id: "a", address: { raw_address: "Tartu, Estonia" } });
    const b = await createCa(acc, { address: { location: { type: "Point", coordinates: [24.75, 59.44] } } });
    const list = await api("/contact_addresses/?page_size=1", { token: acc.admin.token });
    expectStatus(list, 200);
    expect(list.body.results.map((x: any) => x.id)).toEqual([a.id]);
    const next = await api(list.body.next, { token: acc.admin.token });
    expect(next.body.results.map((x: any) => x.id)).toEqual([b.id]);
    expect(b.address.formatted_address).toMatch(/Tallinn/);
    const byExt = await api("/contact_addresses/?external_id=a", { token: acc.admin.token });
    expect(byExt.body.results.map((x: any) => x.id)).toEqual([a.id]);
    expectStatus(await api("/contact_addresses/?city=x", { token: acc.admin.token }), 400);
    const other = await newAccount();
    expectStatus(await api(a.url, { token: other.admin.token }), 404);
    expectStatus(await api(a.url, { method: "PATCH", token: other.admin.token, body: {} }), 404);
    expectStatus(await api(a.url, { method: "DELETE", token: other.admin.token }), 404);
  });

  it("PATCH changes the fields sent, PUT replaces them; tasks keep what they copied", async () => {
    const acc = await newAccount();
    const ca = await createCa(acc, {
      external_id: "c",
      address: { raw_address: "Tartu, Estonia" },
      contact: { name: "Before" },
    });
    const task = await createTask(acc, { address: undefined, contact: undefined, contact_address: ca.url });
    expect(task.contact.name).toBe("Before");
    const p = await api(ca.url, {
      method: "PATCH",
      token: acc.admin.token,
      body: { contact: { name: "After" } },
    });
    expectStatus(p, 200);
    expect(p.body).toMatchObject({ external_id: "c", contact: { name: "After" }, address: ca.address });
    const put = await api(ca.url, {
      method: "PUT",
      token: acc.admin.token,
      body: { address: { raw_address: "Narva, Estonia" } },
    });
    expectStatus(put, 200);
    expect(put.body).toMatchObject({ external_id: null, contact: { name: "" }, metafields: {} });
    expect(put.body.address.formatted_address).toMatch(/Narva/);
    expect((await api(task.url, { token: acc.admin.token })).body.contact.name).toBe("Before");

    expectStatus(await api(ca.url, { method: "DELETE", token: acc.admin.token }), 204);
    expectStatus(await api(ca.url, { token: acc.admin.token }), 404);
    const linked = await api(`/tasks/?contact_address=${ca.id}`, { token: acc.admin.token });
    expect(linked.body.results.map((t: any) => t.id)).toEqual([task.id]);
    const byExt = await api("/tasks/?contact_address__external_id=c", { token: acc.admin.token });
    expect(byExt.body.results.map((t: any) => t.id)).toEqual([task.id]);
  });

  it("is for dispatchers only", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    expectStatus(await api("/contact_addresses/", { token: worker.token }), 403);
    expectStatus(
      await api("/contact_addresses/", { token: worker.token, body: { address: { raw_address: "Tartu" } } }),
      403,
    );
  });
});
