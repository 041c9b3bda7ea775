import { describe, expect, it } from "vitest";
import { insertTask, taskRow } from "../factories";
import { uploadFile } from "../files/helpers";
import { addUser, call, expectStatus, newAccount } from "../helpers";

let n = 0;
const ext = () => `ext-${Date.now()}-${n++}-${crypto.randomUUID().slice(0, 6)}`;

const DEFAULTS = {
  language: "en",
  timezone: "UTC",
  failed_reasons: [],
  review_emails_to_assignee: false,
  feature_signer_name: false,
  map_provider: "osm",
  google_maps_region: null,
  optimize_earliest_start: "08:00:00",
  optimize_latest_end: "17:00:00",
  optimize_visit_duration_margin: "00:00:00",
  pod_show_images: true,
  pod_show_signatures: true,
  pod_show_task_events: true,
  pod_show_task_event_creators: false,
  pod_show_reference: true,
  pod_show_description: true,
  tracker_task_popup_template: "",
};

describe("account configuration (contract §11)", () => {
  it("every member reads the settings with their defaults; only admins write them", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const manager = await addUser(acc, "manager");
    const read = await call(`/accounts/${acc.account.id}/`, { token: worker.token });
    expectStatus(read, 200);
    expect(read.body).toMatchObject(DEFAULTS);
    const denied = await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: manager.token,
      body: { language: "fi" },
    });
    expectStatus(denied, 403);
    const changes = {
      language: "fi",
      timezone: "Europe/Helsinki",
      feature_signer_name: true,
      map_provider: "google",
      google_maps_region: "fi",
      optimize_earliest_start: "07:30:00",
      optimize_latest_end: "16:00:00",
      optimize_visit_duration_margin: "00:05:00",
      pod_show_images: false,
      pod_show_signatures: false,
      pod_show_task_events: false,
      pod_show_task_event_creators: true,
      pod_show_reference: false,
      pod_show_description: false,
      tracker_task_popup_template: "Your parcel: {{reference}}",
    };
    const r = await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: changes,
    });
    expectStatus(r, 200);
    expect(r.body).toMatchObject(changes);
    const again = await call(`/accounts/${acc.account.id}/`, { token: worker.token });
    expect(again.body).toMatchObject(changes);
  });

  it("refuses bad values with field errors and stores nothing", async () => {
    const acc = await newAccount();
    const bad: [Record<string, unknown>, string][] = [
      [{ language: "xx" }, "language"],
      [{ language: "fi-FI" }, "language"],
      [{ timezone: "Mars/Olympus_Mons" }, "timezone"],
      [{ map_provider: "bing" }, "map_provider"],
      [{ google_maps_region: "fin" }, "google_maps_region"],
      [{ optimize_earliest_start: "8:00" }, "optimize_earliest_start"],
      [{ optimize_latest_end: "24:00:00" }, "optimize_latest_end"],
      [{ optimize_earliest_start: "18:00:00", optimize_latest_end: "09:00:00" }, "optimize_latest_end"],
      [{ optimize_visit_duration_margin: "five minutes" }, "optimize_visit_duration_margin"],
      [{ pod_show_images: "yes" }, "pod_show_images"],
      [{ failed_reasons: [""] }, "failed_reasons"],
      [{ language: "de", timezone: "Nowhere/Land" }, "timezone"],
    ];
    for (const [body, field] of bad) {
      const r = await call(`/accounts/${acc.account.id}/`, { method: "PATCH", token: acc.admin.token, body });
      expectStatus(r, 400);
      expect(Object.keys(r.body), JSON.stringify(body)).toContain(field);
    }
    const after = await call(`/accounts/${acc.account.id}/`, { token: acc.admin.token });
    expect(after.body).toMatchObject(DEFAULTS);
  });

  it("another account's settings are 404", async () => {
    const a = await newAccount();
    const b = await newAccount();
    expectStatus(await call(`/accounts/${b.account.id}/`, { token: a.admin.token }), 404);
    const r = await call(`/accounts/${b.account.id}/`, {
      method: "PATCH",
      token: a.admin.token,
      body: { language: "de" },
    });
    expectStatus(r, 404);
  });
});

describe("failed_reasons on fail commands", () => {
  async function setUp(reasons: string[]) {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const patched = await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { failed_reasons: reasons },
    });
    expectStatus(patched, 200);
    const fail = async (notes: string) => {
      const task = await insertTask(acc.account.id, { state: "active", assigneeId: worker.userId });
      const r = await call("/task_commands/", {
        token: worker.token,
        body: { task: task.url, external_id: ext(), time: new Date().toISOString(), action: "fail", notes },
      });
      return { r, task };
    };
    return { fail };
  }

  it("rejects notes that name no reason, listing the reasons, and leaves the task as it was", async () => {
    const { fail } = await setUp(["Not at home", "Refused"]);
    const { r, task } = await fail("Lunch break");
    expect([200, 201]).toContain(r.status);
    expect(r.body.state).toBe("rejected");
    expect(r.body.error_message).toContain('"Not at home", "Refused"');
    expect((await taskRow(task.id)).state).toBe("active");
  });

  it("accepts a reason as it is, or followed by ': ' and details", async () => {
    const { fail } = await setUp(["Not at home", "Refused"]);
    for (const notes of ["Not at home", "Refused: box damaged"]) {
      const { r, task } = await fail(notes);
      expect(r.body.state, notes).toBe("accepted");
      expect((await taskRow(task.id)).state).toBe("failed");
    }
    // A prefix without the separator is not the reason.
    expect((await fail("Refusedx")).r.body.state).toBe("rejected");
  });

  it("accepts any notes when the account has no reasons", async () => {
    const { fail } = await setUp([]);
    expect((await fail("anything")).r.body.state).toBe("accepted");
  });
});

describe("signer names (feature_signer_name, task signers)", () => {
  async function setUp(signers: { name: string }[] | undefined) {
    const acc = await newAccount();
    await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { feature_signer_name: true },
    });
    const task = await call("/tasks/", {
      token: acc.admin.token,
      body: { account: acc.account.url, category: "drop_off", address: { raw_address: "Tallinn" }, signers },
    });
    expectStatus(task, 201);
    const sign = async (signer_name?: string) => {
      const fu = await uploadFile(acc.admin.token, "sig.png", "image/png", new Uint8Array([1, 2, 3]));
      return call("/signatures/", {
        token: acc.admin.token,
        body: { account: acc.account.url, task: task.body.url, file_upload: fu.url, signer_name },
      });
    };
    return { acc, task, sign };
  }

  it("requires signer_name, and one of the task's signers when it lists any", async () => {
    const { sign, task } = await setUp([{ name: "Aino Virtanen" }, { name: "Jussi Virtanen" }]);
    expect(task.body.signers).toEqual([{ name: "Aino Virtanen" }, { name: "Jussi Virtanen" }]);
    const missing = await sign();
    expectStatus(missing, 400);
    expect(missing.body.signer_name).toEqual(["This field is required."]);
    const stranger = await sign("Someone Else");
    expectStatus(stranger, 400);
    expect(stranger.body.signer_name[0]).toContain('"Aino Virtanen"');
    const ok = await sign("Jussi Virtanen");
    expectStatus(ok, 201);
    expect(ok.body.signer_name).toBe("Jussi Virtanen");
  });

  it("any name when the task lists no signers; not required without the feature", async () => {
    const { sign } = await setUp(undefined);
    expectStatus(await sign("Whoever Signed"), 201);
    const plain = await newAccount();
    const t = await insertTask(plain.account.id);
    const fu = await uploadFile(plain.admin.token, "sig.png", "image/png", new Uint8Array([1]));
    const r = await call("/signatures/", {
      token: plain.admin.token,
      body: { account: plain.account.url, task: t.url, file_upload: fu.url },
    });
    expectStatus(r, 201);
    expect(r.body.signer_name).toBeNull();
  });

  it("task signers must be a list of {name}", async () => {
    const acc = await newAccount();
    for (const signers of [["Aino"], [{ name: "" }], [{ who: "Aino" }], "Aino"]) {
      const r = await call("/tasks/", {
        token: acc.admin.token,
        body: {
          account: acc.account.url,
          category: "drop_off",
          address: { raw_address: "Tallinn" },
          signers,
        },
      });
      expectStatus(r, 400);
      expect(Object.keys(r.body)).toContain("signers");
    }
  });
});

describe("account roles: travel estimates, vehicle and depots (contract §11)", () => {
  it("stores capacity and geocodes the depots like task addresses", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const roles = await call("/account_roles/?page_size=100", { token: acc.admin.token });
    const role = roles.body.results.find((r: any) => r.user === worker.user);
    expect(role).toMatchObject({
      show_travel_estimates: true,
      vehicle_capacity: [],
      start_address: null,
      end_address: null,
      is_active: true,
    });
    const r = await call(`/account_roles/${role.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: {
        show_travel_estimates: false,
        vehicle_capacity: [1200, 40],
        start_address: { raw_address: "Tallinn" },
        end_address: { location: { type: "Point", coordinates: [24.94, 60.17] } },
      },
    });
    expectStatus(r, 200);
    expect(r.body.show_travel_estimates).toBe(false);
    expect(r.body.vehicle_capacity).toEqual([1200, 40]);
    expect(r.body.start_address.raw_address).toBe("Tallinn");
    expect(r.body.start_address.location.coordinates).toHaveLength(2);
    expect(r.body.start_address.geocoded_at).toEqual(expect.any(String));
    expect(r.body.end_address.location.coordinates).toEqual([24.94, 60.17]);
    expect(r.body.end_address.formatted_address).toEqual(expect.any(String));
    const cleared = await call(`/account_roles/${role.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { end_address: null },
    });
    expect(cleared.body.end_address).toBeNull();
    expect(cleared.body.start_address.raw_address).toBe("Tallinn");
  });

  it("refuses bad capacities and empty addresses, and other accounts' roles", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const roles = await call("/account_roles/?page_size=100", { token: acc.admin.token });
    const role = roles.body.results.find((r: any) => r.user === worker.user);
    for (const body of [
      { vehicle_capacity: [1, 2, 3, 4] },
      { vehicle_capacity: [-1] },
      { vehicle_capacity: [1.5] },
      { start_address: {} },
      { show_travel_estimates: "no" },
    ]) {
      const r = await call(`/account_roles/${role.id}/`, { method: "PATCH", token: acc.admin.token, body });
      expectStatus(r, 400);
    }
    const other = await newAccount();
    const r = await call(`/account_roles/${role.id}/`, {
      method: "PATCH",
      token: other.admin.token,
      body: { vehicle_capacity: [1] },
    });
    expectStatus(r, 404);
    const still = await call(`/account_roles/${role.id}/`, { token: acc.admin.token });
    expect(still.body.vehicle_capacity).toEqual([]);
  });
});
