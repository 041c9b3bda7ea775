import { describe, expect, it } from "vitest";
import { expectStatus, newAccount } from "../helpers";
import { api, createTask, ids } from "./helpers";

// The dispatch console's day board in a handful of calls (contract §26): `day` and `undated`.
describe("GET /tasks/?day= and ?undated=", () => {
  it("lists a day's tasks by window or scheduled time, in the request's zone", async () => {
    const acc = await newAccount();
    const inside = await createTask(acc, {
      complete_after: "2030-03-05T08:00:00Z",
      complete_before: "2030-03-05T10:00:00Z",
    });
    const spanning = await createTask(acc, {
      complete_after: "2030-03-04T20:00:00Z",
      complete_before: "2030-03-06T02:00:00Z",
    });
    const deadlineOnly = await createTask(acc, {
      complete_after: null,
      complete_before: "2030-03-05T23:00:00Z",
    });
    const otherDay = await createTask(acc, {
      complete_after: "2030-03-06T08:00:00Z",
      complete_before: "2030-03-06T10:00:00Z",
    });
    const undated = await createTask(acc, { complete_after: null, complete_before: null });
    const token = acc.admin.token;

    const day = await api("/tasks/?day=2030-03-05", { token });
    expectStatus(day, 200);
    expect(ids(day.body.results).sort()).toEqual([inside.id, spanning.id, deadlineOnly.id].sort());

    // In Helsinki (UTC+2) 2030-03-05 ends at 22:00Z: the 23:00Z deadline is the next day.
    const helsinki = await api("/tasks/?day=2030-03-05", {
      token,
      headers: { "Accept-Timezone": "Europe/Helsinki" },
    });
    expect(ids(helsinki.body.results).sort()).toEqual([inside.id, spanning.id].sort());
    const next = await api("/tasks/?day=2030-03-06", {
      token,
      headers: { "Accept-Timezone": "Europe/Helsinki" },
    });
    expect(ids(next.body.results).sort()).toEqual([spanning.id, deadlineOnly.id, otherDay.id].sort());

    const none = await api("/tasks/?undated=true&state=unassigned", { token });
    expect(ids(none.body.results)).toEqual([undated.id]);
    const dated = await api("/tasks/?undated=false", { token });
    expect(ids(dated.body.results)).not.toContain(undated.id);
    expect(dated.body.results).toHaveLength(4);
  });

  it("refuses a malformed day or flag, naming the parameter", async () => {
    const acc = await newAccount();
    const r = await api("/tasks/?day=5.3.2030&undated=maybe", { token: acc.admin.token });
    expectStatus(r, 400);
    expect(Object.keys(r.body).sort()).toEqual(["day", "undated"]);
  });
});
