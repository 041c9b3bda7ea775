import { describe, expect, it } from "vitest";
import { addUser, call, expectStatus, newAccount } from "../helpers";
import { recurrenceBody, taskTemplate } from "./helpers";

// Recurrences (contract §20): CRUD, roles, validation, the cross-account rule. Starts lie in
// 2030 so that nothing depends on today's date.

describe("/recurrences/ (contract §20)", () => {
  it("creates, lists, reads, changes and deletes; makes nothing at once", async () => {
    const acc = await newAccount();
    const r = await call("/recurrences/", { token: acc.admin.token, body: recurrenceBody(acc) });
    expectStatus(r, 201);
    expect(r.body).toMatchObject({
      rule: "FREQ=WEEKLY;BYDAY=MO,WE",
      start: "2030-03-04T09:00:00",
      end: null,
      timezone: "Europe/Helsinki",
      assignee: null,
      kind: "task",
      is_active: true,
      account: acc.account.url,
      created_by: acc.admin.user,
      next_occurrence: "2030-03-04T07:00:00.000Z",
    });
    expect(r.body.template).toMatchObject({ category: "drop_off", description: "weekly delivery" });
    expect(r.body.url).toMatch(new RegExp(`/recurrences/${r.body.id}/$`));
    const tasks = await call("/tasks/", { token: acc.admin.token });
    expect(tasks.body.results).toEqual([]);

    const list = await call("/recurrences/", { token: acc.admin.token });
    expectStatus(list, 200);
    expect(list.body.results.map((x: any) => x.id)).toEqual([r.body.id]);
    const filtered = await call("/recurrences/?kind=order", { token: acc.admin.token });
    expect(filtered.body.results).toEqual([]);
    expectStatus(await call("/recurrences/?nope=1", { token: acc.admin.token }), 400);

    const read = await call(`/recurrences/${r.body.id}/`, { token: acc.admin.token });
    expect(read.body).toEqual(r.body);

    const patched = await call(`/recurrences/${r.body.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { rule: "FREQ=WEEKLY;BYDAY=FR", end: "2030-12-31T00:00:00" },
    });
    expectStatus(patched, 200);
    expect(patched.body).toMatchObject({
      rule: "FREQ=WEEKLY;BYDAY=FR",
      end: "2030-12-31T00:00:00",
      next_occurrence: "2030-03-08T07:00:00.000Z",
    });
    const paused = await call(`/recurrences/${r.body.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { is_active: false },
    });
    expect(paused.body).toMatchObject({ is_active: false, next_occurrence: null });

    expectStatus(await call(`/recurrences/${r.body.id}/`, { method: "DELETE", token: acc.admin.token }), 204);
    expectStatus(await call(`/recurrences/${r.body.id}/`, { token: acc.admin.token }), 404);
  });

  it("defaults the zone to the account's, and renders times in Accept-Timezone", async () => {
    const acc = await newAccount();
    const s = await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { timezone: "America/New_York" },
    });
    expectStatus(s, 200);
    const body = recurrenceBody(acc) as Record<string, unknown>;
    delete body.timezone;
    const r = await call("/recurrences/", {
      token: acc.admin.token,
      body,
      headers: { "Accept-Timezone": "Europe/Helsinki" },
    });
    expectStatus(r, 201);
    expect(r.body.timezone).toBe("America/New_York");
    // 09:00 New York (EST, -05:00) is 16:00 in Helsinki (+02:00).
    expect(r.body.next_occurrence).toBe("2030-03-04T16:00:00.000+02:00");
  });

  it("is for dispatchers: managers and integrations write, workers get 403", async () => {
    const acc = await newAccount();
    const manager = await addUser(acc, "manager");
    const integration = await addUser(acc, "integration");
    const worker = await addUser(acc, "worker");
    for (const actor of [manager, integration]) {
      expectStatus(await call("/recurrences/", { token: actor.token, body: recurrenceBody(acc) }), 201);
    }
    const made = await call("/recurrences/", { token: acc.admin.token });
    const id = made.body.results[0].id;
    expectStatus(await call("/recurrences/", { token: worker.token }), 403);
    expectStatus(await call("/recurrences/", { token: worker.token, body: recurrenceBody(acc) }), 403);
    expectStatus(await call(`/recurrences/${id}/`, { token: worker.token }), 403);
    expectStatus(await call(`/recurrences/${id}/`, { method: "DELETE", token: worker.token }), 403);
  });

  it("answers 400 on each bad input, naming the field, and stores nothing", async () => {
    const acc = await newAccount();
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ rule: "not a rule" }, "rule", /Not a valid RFC 5545 RRULE/],
      [{ rule: "FREQ=WEEKLY;COUNT=3;UNTIL=20301231T000000Z" }, "rule", /COUNT and UNTIL/],
      [{ rule: "FREQ=MINUTELY" }, "rule", /MINUTELY/],
      [{ rule: "FREQ=SECONDLY" }, "rule", /SECONDLY/],
      [{ rule: "FREQ=HOURLY" }, "rule", /more than 100 occurrences within the 7-day horizon/],
      [{ rule: "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30" }, "rule", /no occurrence/],
      [{ rule: "FREQ=DAILY;BYHOUR=25" }, "rule", /BYHOUR must be 0 to 23, not 25/],
      [{ rule: "FREQ=HOURLY;BYHOUR=9;BYMONTHDAY=-31;BYYEARDAY=366" }, "rule", /no occurrence/],
      [{ start: "2030-03-04T09:00:00+02:00" }, "start", /without offset/],
      [{ start: "2030-03-04T09:00:00Z" }, "start", /without offset/],
      [{ start: "2030-02-30T09:00:00" }, "start", /without offset/],
      [{ end: "2030-03-01T00:00:00" }, "end", /not be earlier than start/],
      [{ end: "tomorrow" }, "end", /without offset/],
      [{ timezone: "Mars/Olympus_Mons" }, "timezone", /Unknown time zone/],
      [{ assignee: "not a url" }, "assignee", /Invalid hyperlink/],
      [{ kind: "meeting" }, "kind", /not a valid choice/],
      [{ rule: undefined }, "rule", /required/],
      [{ start: undefined }, "start", /required/],
    ];
    for (const [extra, field, message] of cases) {
      const body = { ...recurrenceBody(acc), ...extra };
      const r = await call("/recurrences/", { token: acc.admin.token, body });
      expect(r.status, `${JSON.stringify(extra)}: ${r.text}`).toBe(400);
      expect(JSON.stringify(r.body[field]), JSON.stringify(extra)).toMatch(message);
    }
    // The template is checked as POST /tasks/ checks a body.
    const noCategory = taskTemplate(acc) as Record<string, unknown>;
    delete noCategory.category;
    const t = await call("/recurrences/", {
      token: acc.admin.token,
      body: recurrenceBody(acc, { template: noCategory }),
    });
    expectStatus(t, 400);
    expect(t.body.template.category).toEqual(["This field is required."]);
    const window = await call("/recurrences/", {
      token: acc.admin.token,
      body: recurrenceBody(acc, {
        template: taskTemplate(acc, {
          complete_after: "2030-03-04T10:00:00Z",
          complete_before: "2030-03-04T08:00:00Z",
        }),
      }),
    });
    expectStatus(window, 400);
    expect(window.body.template.complete_before).toBeDefined();
    // An order template: as POST /orders/ (one order), without external_id.
    const order = await call("/recurrences/", {
      token: acc.admin.token,
      body: recurrenceBody(acc, {
        kind: "order",
        template: { account: acc.account.url, external_id: "weekly", tasks_data: [taskTemplate(acc)] },
      }),
    });
    expectStatus(order, 400);
    expect(order.body.template.external_id[0]).toMatch(/Not allowed in a recurrence/);
    const badTask = await call("/recurrences/", {
      token: acc.admin.token,
      body: recurrenceBody(acc, {
        kind: "order",
        template: { account: acc.account.url, tasks_data: [{ address: { raw_address: "Tallinn" } }] },
      }),
    });
    expectStatus(badTask, 400);
    expect(badTask.body.template.tasks_data[0].category).toEqual(["This field is required."]);
    const list = await call("/recurrences/", { token: acc.admin.token });
    expect(list.body.results).toEqual([]);
  });

  it("keeps accounts apart: another account's recurrence is 404, its user is not an assignee", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const r = await call("/recurrences/", { token: a.admin.token, body: recurrenceBody(a) });
    expectStatus(r, 201);
    for (const method of ["GET", "PATCH", "PUT", "DELETE"]) {
      const other = await call(`/recurrences/${r.body.id}/`, {
        method,
        token: b.admin.token,
        body: method === "PATCH" || method === "PUT" ? recurrenceBody(b) : undefined,
      });
      expect(other.status, method).toBe(404);
    }
    const list = await call("/recurrences/", { token: b.admin.token });
    expect(list.body.results).toEqual([]);
    const foreign = await call("/recurrences/", {
      token: a.admin.token,
      body: recurrenceBody(a, { assignee: b.admin.user }),
    });
    expectStatus(foreign, 400);
    expect(foreign.body.assignee).toEqual(["Invalid hyperlink - Object does not exist."]);
    const foreignTemplate = await call("/recurrences/", {
      token: a.admin.token,
      body: recurrenceBody(a, { template: taskTemplate(b) }),
    });
    expectStatus(foreignTemplate, 400);
    expect(foreignTemplate.body.template.account).toEqual(["Invalid hyperlink - Object does not exist."]);
  });
});
