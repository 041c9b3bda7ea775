import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { taskStub } from "../../src/durable-objects/task/client";
import { addUser, defineMetafields, expectStatus, newAccount, storedEvents } from "../helpers";
import { stored } from "../stored";
import { api, createTask, sampleTask } from "./helpers";

const NOT_EXIST = ["Invalid hyperlink - Object does not exist."];

async function eventsOf(objectId: string) {
  return (await storedEvents({ objectId })).map((e) => ({ type: e.type, data: e.data }));
}

describe("POST /tasks/ (interface §4.4)", () => {
  it("creates the interface's sample task: unassigned, geocoded address, null assignee, absolute URL", async () => {
    const acc = await newAccount();
    const r = await api("/tasks/", { token: acc.admin.token, body: sampleTask(acc) });
    expectStatus(r, 201);
    const t = r.body;
    expect(t.url).toBe(`https://api.test/tasks/${t.id}/`);
    expect(t).toMatchObject({
      account: acc.account.url,
      state: "unassigned",
      category: "drop_off",
      assignee: null,
      order: null,
      position: null,
      description: "Leave at the front desk",
      complete_after: "2030-06-01T09:00:00.000Z",
      complete_before: "2030-06-01T17:00:00.000Z",
      created_by: acc.admin.user,
      contact: {
        name: "Mari Maasikas",
        company: "",
        phones: ["+3725550000"],
        emails: ["mari@example.com"],
        notes: "",
      },
    });
    expect(t.address.raw_address).toBe("Viru väljak 4, Tallinn, Estonia");
    expect(t.address.formatted_address).toMatch(/Tallinn/);
    expect(t.address.location.type).toBe("Point");
    const [lon, lat] = t.address.location.coordinates;
    expect(lon).toBeCloseTo(24.75, 0);
    expect(lat).toBeCloseTo(59.44, 0);
    expect(t.address.geocoded_at).toEqual(expect.any(String));
    expect(t.address.geocode_failed_at).toBeNull();
    expect(t.address.geocoding_provider).toBe("offline");
    // Write-only fields are never rendered.
    expect(t).not.toHaveProperty("contact_address");
    expect(t).not.toHaveProperty("contact_address_external_id");
    const read = await api(t.url, { token: acc.admin.token });
    expectStatus(read, 200);
    expect(read.body).toEqual(t);
  });

  it("records task.created with the full task in the same batch", async () => {
    const acc = await newAccount();
    const t = await createTask(acc);
    const events = await eventsOf(t.id);
    expect(events.map((e) => e.type)).toEqual(["task.created"]);
    expect(events[0].data).toEqual(t);
  });

  it("reverse geocodes a location-only address and stores text + point as sent", async () => {
    const acc = await newAccount();
    const point = await createTask(acc, {
      address: { location: { type: "Point", coordinates: [26.72, 58.38] } },
    });
    expect(point.address.formatted_address).toMatch(/Tartu/);
    expect(point.address.location.coordinates).toEqual([26.72, 58.38]);
    expect(point.address.geocoded_at).not.toBeNull();

    const both = await createTask(acc, {
      address: { raw_address: "Somewhere 1", location: { type: "Point", coordinates: [1, 2] } },
    });
    expect(both.address).toMatchObject({
      raw_address: "Somewhere 1",
      formatted_address: "Somewhere 1",
      location: { type: "Point", coordinates: [1, 2] },
      geocoded_at: null,
      geocode_failed_at: null,
    });
  });

  it("stores a task whose address cannot be found, with geocode_failed_at", async () => {
    const acc = await newAccount();
    const t = await createTask(acc, { address: { raw_address: "Qwxzvbn Plkjh 99999" } });
    expect(t.address).toMatchObject({
      raw_address: "Qwxzvbn Plkjh 99999",
      formatted_address: null,
      location: null,
      geocoded_at: null,
      geocode_failed_at: expect.any(String),
    });
  });

  it("starts draft, scheduled (future scheduled_time) or assigned (with an assignee)", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    expect((await createTask(acc, { state: "draft" })).state).toBe("draft");
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = await createTask(acc, { state: "scheduled", scheduled_time: future });
    expect(scheduled.state).toBe("scheduled");
    expect(scheduled.scheduled_time).toBe(future);
    const assigned = await createTask(acc, { assignee: worker.user });
    expect(assigned).toMatchObject({ state: "assigned", assignee: worker.user });
    // The state a task would get anyway may be sent (a body copied from a GET).
    expect((await createTask(acc, { state: "unassigned" })).state).toBe("unassigned");

    const past = await api("/tasks/", {
      token: acc.admin.token,
      body: sampleTask(acc, { state: "scheduled", scheduled_time: "2020-01-01T00:00:00Z" }),
    });
    expectStatus(past, 400);
    expect(past.body).toEqual({ scheduled_time: ["A scheduled task needs a scheduled_time in the future."] });
    const completed = await api("/tasks/", {
      token: acc.admin.token,
      body: sampleTask(acc, { state: "completed" }),
    });
    expectStatus(completed, 400);
    expect(Object.keys(completed.body)).toEqual(["state"]);
  });

  it("arms the task's alarm: a scheduled task moves by itself at its scheduled_time", async () => {
    const acc = await newAccount();
    const at = new Date(Date.now() + 1500).toISOString();
    const t = await createTask(acc, { state: "scheduled", scheduled_time: at });
    expect(t.state).toBe("scheduled");
    // The alarm fires by itself at its time (or is run here if the runtime has not yet).
    await new Promise((r) => setTimeout(r, 1600));
    await runDurableObjectAlarm(taskStub(env, t.id));
    let state = "scheduled";
    for (let i = 0; i < 20 && state === "scheduled"; i++) {
      state = (await api(t.url, { token: acc.admin.token })).body.state;
      if (state === "scheduled") await new Promise((r) => setTimeout(r, 100));
    }
    expect(state).toBe("unassigned");
  });

  it("keeps every field of interface §2.4", async () => {
    const acc = await newAccount();
    await defineMetafields(acc, "tasks", { floor: "integer", gate: "string" });
    const t = await createTask(acc, {
      category: "service",
      scheduled_time: "2030-06-01T10:00:00+03:00",
      duration: "01:30:00",
      position: 2.5,
      metafields: { floor: 3, gate: "B" },
      signers: [{ name: "Jaan" }],
      form_default_values: { form: { field: "x" } },
    });
    expect(t).toMatchObject({
      category: "service",
      scheduled_time: "2030-06-01T07:00:00.000Z",
      duration: "01:30:00",
      position: 2.5,
      metafields: { floor: 3, gate: "B" },
      signers: [{ name: "Jaan" }],
      form_default_values: { form: { field: "x" } },
      route: null,
      recurrence: null,
      calendar_time: null,
    });
    const routes = await api(`${t.url}?expand=routes`, { token: acc.admin.token });
    expectStatus(routes, 200);
    expect(routes.body.routes).toEqual([]);
  });

  it("answers DRF field errors: required fields, formats, the completion window, unknown routes", async () => {
    const acc = await newAccount();
    const empty = await api("/tasks/", { token: acc.admin.token, body: {} });
    expectStatus(empty, 400);
    expect(empty.body).toEqual({
      account: ["This field is required."],
      category: ["This field is required."],
      address: ["This field is required."],
    });
    const bad = await api("/tasks/", {
      token: acc.admin.token,
      body: sampleTask(acc, {
        complete_after: "yesterday",
        duration: "90 minutes",
        address: {},
        route: "https://api.test/routes/00000000-0000-7000-8000-000000000000/",
      }),
    });
    expectStatus(bad, 400);
    expect(Object.keys(bad.body).sort()).toEqual(["duration"]);
    const bad2 = await api("/tasks/", {
      token: acc.admin.token,
      body: sampleTask(acc, {
        complete_after: "yesterday",
        address: {},
        route: "https://api.test/routes/00000000-0000-7000-8000-000000000000/",
      }),
    });
    expectStatus(bad2, 400);
    expect(bad2.body).toEqual({
      complete_after: [expect.stringMatching(/^Datetime has wrong format/)],
      address: { non_field_errors: ["Give raw_address, location or both."] },
      route: NOT_EXIST,
    });
    const window = await api("/tasks/", {
      token: acc.admin.token,
      body: sampleTask(acc, {
        complete_after: "2030-01-02T00:00:00Z",
        complete_before: "2030-01-01T00:00:00Z",
      }),
    });
    expectStatus(window, 400);
    expect(window.body).toEqual({
      complete_before: ["complete_before must not be earlier than complete_after."],
    });
  });

  it("lets only dispatchers create tasks", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    expectStatus(await api("/tasks/", { token: worker.token, body: sampleTask(acc) }), 403);
    for (const role of ["manager", "integration"] as const) {
      const user = await addUser(acc, role);
      expectStatus(await api("/tasks/", { token: user.token, body: sampleTask(acc) }), 201);
    }
  });

  it("treats another account's order, user, contact address or account as not existing", async () => {
    const mine = await newAccount();
    const other = await newAccount();
    const theirWorker = await addUser(other, "worker");
    const theirOrder = await api("/orders/", {
      token: other.admin.token,
      body: { account: other.account.url, reference: "theirs" },
    });
    expectStatus(theirOrder, 201);
    const theirCa = await api("/contact_addresses/", {
      token: other.admin.token,
      body: { external_id: "shared-ext", address: { raw_address: "Tartu, Estonia" } },
    });
    expectStatus(theirCa, 201);
    const r = await api("/tasks/", {
      token: mine.admin.token,
      body: sampleTask(mine, {
        account: other.account.url,
        order: theirOrder.body.url,
        assignee: theirWorker.user,
        contact_address: theirCa.body.url,
      }),
    });
    expectStatus(r, 400);
    expect(r.body).toEqual({
      account: NOT_EXIST,
      order: NOT_EXIST,
      assignee: NOT_EXIST,
      contact_address: NOT_EXIST,
    });
    const byExt = await api("/tasks/", {
      token: mine.admin.token,
      body: sampleTask(mine, { contact_address_external_id: "shared-ext" }),
    });
    expectStatus(byExt, 400);
    expect(byExt.body).toEqual({
      contact_address_external_id: ["Object with external_id=shared-ext does not exist."],
    });
    const malformed = await api("/tasks/", {
      token: mine.admin.token,
      body: sampleTask(mine, { order: "not a url" }),
    });
    expectStatus(malformed, 400);
    expect(malformed.body).toEqual({ order: ["Invalid hyperlink - No URL match."] });
    const { results } = await stored
      .prepare("SELECT id FROM tasks WHERE account_id = ?")
      .bind(mine.account.id)
      .all();
    expect(results).toHaveLength(0);
  });

  it("fills a missing address and/or contact from contact_address or contact_address_external_id", async () => {
    const acc = await newAccount();
    const ca = await api("/contact_addresses/", {
      token: acc.admin.token,
      body: {
        external_id: "shop-7",
        address: { raw_address: "Pärnu, Estonia" },
        contact: { name: "Shop 7", phones: ["+372 111"] },
      },
    });
    expectStatus(ca, 201);
    // undefined: left out of the JSON body.
    const filled = await createTask(acc, {
      address: undefined,
      contact: undefined,
      contact_address: ca.body.url,
    });
    expect(filled.address).toMatchObject({
      raw_address: "Pärnu, Estonia",
      formatted_address: ca.body.address.formatted_address,
      location: ca.body.address.location,
    });
    expect(filled.contact).toMatchObject({ name: "Shop 7", phones: ["+372 111"] });

    // Only what is missing is filled: the task's own address stays.
    const partial = await createTask(acc, {
      address: { raw_address: "Tartu, Estonia" },
      contact: undefined,
      contact_address_external_id: "shop-7",
    });
    expect(partial.address.raw_address).toBe("Tartu, Estonia");
    expect(partial.contact.name).toBe("Shop 7");

    const mismatch = await api("/tasks/", {
      token: acc.admin.token,
      body: sampleTask(acc, { contact_address: ca.body.url, contact_address_external_id: "nope" }),
    });
    expectStatus(mismatch, 400);
    expect(mismatch.body).toEqual({
      contact_address_external_id: ["Object with external_id=nope does not exist."],
    });
  });
});

describe("Accept-Timezone (contract §1)", () => {
  it("renders task timestamps in the caller's zone and reads offset-less input in it", async () => {
    const acc = await newAccount();
    const t = await createTask(acc);
    const r = await api(t.url, { token: acc.admin.token, headers: { "Accept-Timezone": "Europe/Tallinn" } });
    expectStatus(r, 200);
    expect(r.body.complete_after).toBe("2030-06-01T12:00:00.000+03:00");
    expect(r.body.complete_before).toBe("2030-06-01T20:00:00.000+03:00");
    expect(r.body.created_at).toMatch(/\+0[23]:00$/);
    expect(r.body.address.geocoded_at).toMatch(/\+0[23]:00$/);

    const local = await api("/tasks/", {
      token: acc.admin.token,
      headers: { "Accept-Timezone": "America/New_York" },
      body: sampleTask(acc, {
        complete_after: "2030-01-15T08:00:00",
        complete_before: "2030-01-15T10:00:00",
      }),
    });
    expectStatus(local, 201);
    expect(local.body.complete_after).toBe("2030-01-15T08:00:00.000-05:00");
    const utc = await api(local.body.url, { token: acc.admin.token });
    expect(utc.body.complete_after).toBe("2030-01-15T13:00:00.000Z");

    const noZone = await api("/tasks/", {
      token: acc.admin.token,
      body: sampleTask(acc, { complete_after: "2030-01-15T08:00:00", complete_before: undefined }),
    });
    expectStatus(noZone, 400);
    expect(Object.keys(noZone.body)).toEqual(["complete_after"]);
  });
});
