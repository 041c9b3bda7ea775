import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sweepRecurrences } from "../../src/services/recurrences";
import {
  creatorPrincipal,
  makeOccurrence,
  type RecurrenceRow,
} from "../../src/services/recurrences/occurrences";
import { addUser, call, expectStatus, newAccount, type TestAccount } from "../helpers";
import { stored } from "../stored";
import { recurrenceBody, taskTemplate } from "./helpers";

// Occurrences (contract §20): the shortcut's first occurrence, the cron's sweep over the
// horizon (exactly once, even concurrently), daylight-saving, PATCH, DELETE, assignee.
// The sweep is given its "now" so that nothing depends on today's date.

const at = (iso: string) => Date.parse(iso);

/** The tasks a recurrence made, read through the API, by occurrence time. */
async function madeTasks(acc: TestAccount, recurrenceId: string) {
  const { results } = await stored
    .prepare("SELECT id FROM tasks WHERE account_id = ? AND recurrence_id = ? ORDER BY calendar_time")
    .bind(acc.account.id, recurrenceId)
    .all<{ id: string }>();
  const tasks = [];
  for (const { id } of results) {
    const r = await call(`/tasks/${id}/`, { token: acc.admin.token });
    expectStatus(r, 200);
    tasks.push(r.body);
  }
  return tasks;
}

describe("recurrence occurrences (contract §20)", () => {
  it("POST /tasks/ with recurrence answers its first occurrence; the cron does not make it again", async () => {
    const acc = await newAccount();
    const r = await call("/tasks/", {
      token: acc.admin.token,
      body: taskTemplate(acc, {
        complete_after: "2030-03-04T06:00:00Z",
        complete_before: "2030-03-04T10:00:00Z",
        recurrence: {
          rule: "FREQ=WEEKLY;BYDAY=MO,WE",
          start: "2030-03-04T09:00:00",
          timezone: "Europe/Helsinki",
        },
      }),
    });
    expectStatus(r, 201);
    expect(r.body.calendar_time).toBe("2030-03-04T09:00:00+02:00");
    expect(r.body.recurrence).toMatch(/\/recurrences\/[0-9a-f-]{36}\/$/);
    expect(r.body.created_by).toBe(acc.admin.user);
    const recurrence = await call(r.body.recurrence, { token: acc.admin.token });
    expectStatus(recurrence, 200);
    expect(recurrence.body).toMatchObject({ kind: "task", next_occurrence: "2030-03-06T07:00:00.000Z" });
    expect(recurrence.body.template.recurrence).toBeUndefined();

    await sweepRecurrences(env, at("2030-03-03T00:00:00Z"));
    await sweepRecurrences(env, at("2030-03-03T00:00:00Z"));
    const tasks = await madeTasks(acc, recurrence.body.id);
    // Within 3–10 March: Monday the 4th (made at once) and Wednesday the 6th, once each.
    expect(tasks.map((t) => t.calendar_time)).toEqual([
      "2030-03-04T09:00:00+02:00",
      "2030-03-06T09:00:00+02:00",
    ]);
    expect(tasks[0].id).toBe(r.body.id);
    // The window moved with the occurrence, in local time.
    expect(tasks[1]).toMatchObject({
      complete_after: "2030-03-06T06:00:00.000Z",
      complete_before: "2030-03-06T10:00:00.000Z",
      created_by: acc.admin.user,
      description: "weekly delivery",
    });
  });

  it("POST /orders/ with recurrence answers the first order; arrays may not carry one", async () => {
    const acc = await newAccount();
    const r = await call("/orders/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        reference: "standing order",
        tasks_data: [taskTemplate(acc), taskTemplate(acc, { category: "pick_up" })],
        recurrence: { rule: "FREQ=DAILY", start: "2030-05-01T08:00:00", timezone: "UTC" },
      },
    });
    expectStatus(r, 201);
    expect(r.body.recurrence).toMatch(/\/recurrences\//);
    // The order itself has its occurrence's time too (contract §20), as its tasks.
    expect(r.body.calendar_time).toBe("2030-05-01T08:00:00+00:00");
    expect((await call(r.body.url, { token: acc.admin.token })).body.calendar_time).toBe(
      "2030-05-01T08:00:00+00:00",
    );
    expect(r.body.tasks).toHaveLength(2);
    const task = await call(r.body.tasks[0], { token: acc.admin.token });
    expect(task.body).toMatchObject({
      calendar_time: "2030-05-01T08:00:00+00:00",
      recurrence: r.body.recurrence,
    });
    const recurrenceId = r.body.recurrence.split("/").at(-2);
    await sweepRecurrences(env, at("2030-05-01T00:00:00Z"));
    const { results } = await stored
      .prepare("SELECT id, reference FROM orders WHERE account_id = ? AND recurrence_id = ?")
      .bind(acc.account.id, recurrenceId)
      .all<{ id: string; reference: string }>();
    // 1 May (made at once) to 7 May: seven orders of two tasks each.
    expect(results).toHaveLength(7);
    const times = await stored
      .prepare(
        "SELECT calendar_time FROM orders WHERE account_id = ? AND recurrence_id = ? ORDER BY calendar_time",
      )
      .bind(acc.account.id, recurrenceId)
      .all<{ calendar_time: string }>();
    expect(times.results.map((o) => JSON.parse(o.calendar_time))).toEqual(
      [1, 2, 3, 4, 5, 6, 7].map((d) => `2030-05-0${d}T08:00:00+00:00`),
    );
    expect(new Set(results.map((o) => o.reference))).toEqual(new Set(["standing order"]));
    const tasks = await stored
      .prepare("SELECT COUNT(*) AS n FROM tasks WHERE account_id = ? AND recurrence_id = ?")
      .bind(acc.account.id, recurrenceId)
      .first<{ n: number }>();
    expect(tasks!.n).toBe(14);

    const array = await call("/orders/", {
      token: acc.admin.token,
      body: [
        { account: acc.account.url },
        { account: acc.account.url, recurrence: { rule: "FREQ=DAILY", start: "2030-05-01T08:00:00" } },
      ],
    });
    expectStatus(array, 400);
    expect(array.body[0]).toEqual({});
    expect(array.body[1].recurrence[0]).toMatch(/single order/);
    const bad = await call("/orders/", {
      token: acc.admin.token,
      body: {
        account: acc.account.url,
        recurrence: { rule: "FREQ=DAILY;COUNT=1;UNTIL=20300101T000000Z", start: "x" },
      },
    });
    expectStatus(bad, 400);
    expect(Object.keys(bad.body.recurrence).sort()).toEqual(["rule", "start"]);
  });

  it("makes each occurrence exactly once when two sweeps run at the same time", async () => {
    const acc = await newAccount();
    const r = await call("/recurrences/", {
      token: acc.admin.token,
      body: recurrenceBody(acc, { rule: "FREQ=DAILY", start: "2030-06-01T09:00:00" }),
    });
    expectStatus(r, 201);
    const now = at("2030-06-01T00:00:00Z");
    await Promise.all([sweepRecurrences(env, now), sweepRecurrences(env, now), sweepRecurrences(env, now)]);
    const tasks = await madeTasks(acc, r.body.id);
    expect(tasks.map((t) => t.calendar_time)).toEqual(
      [1, 2, 3, 4, 5, 6, 7].map((d) => `2030-06-0${d}T09:00:00+03:00`),
    );
    const claims = await stored
      .prepare("SELECT COUNT(*) AS n FROM recurrence_occurrences WHERE recurrence_id = ?")
      .bind(r.body.id)
      .first<{ n: number }>();
    expect(claims!.n).toBe(7);
    const read = await call(`/recurrences/${r.body.id}/`, { token: acc.admin.token });
    expect(read.body.next_occurrence).toBe("2030-06-08T06:00:00.000Z");
    // A later run adds only what entered the horizon.
    await sweepRecurrences(env, at("2030-06-02T00:00:00Z"));
    expect(await madeTasks(acc, r.body.id)).toHaveLength(8);
  });

  it("keeps 09:00 Helsinki across the March change, window included", async () => {
    const acc = await newAccount();
    const r = await call("/recurrences/", {
      token: acc.admin.token,
      body: recurrenceBody(acc, {
        rule: "FREQ=WEEKLY;BYDAY=MO",
        start: "2030-03-18T09:00:00",
        template: taskTemplate(acc, { complete_before: "2030-03-18T17:00:00+02:00" }),
      }),
    });
    expectStatus(r, 201);
    await sweepRecurrences(env, at("2030-03-18T00:00:00Z"));
    await sweepRecurrences(env, at("2030-03-26T00:00:00Z"));
    const tasks = await madeTasks(acc, r.body.id);
    // Summer time starts on 31 March 2030.
    expect(tasks.map((t) => [t.calendar_time, t.complete_before])).toEqual([
      ["2030-03-18T09:00:00+02:00", "2030-03-18T15:00:00.000Z"],
      ["2030-03-25T09:00:00+02:00", "2030-03-25T15:00:00.000Z"],
      ["2030-04-01T09:00:00+03:00", "2030-04-01T14:00:00.000Z"],
    ]);
  });

  it("PATCH changes only occurrences not yet made; is_active false and DELETE stop the rest", async () => {
    const acc = await newAccount();
    const r = await call("/recurrences/", {
      token: acc.admin.token,
      body: recurrenceBody(acc, { rule: "FREQ=DAILY", start: "2030-07-01T09:00:00", timezone: "UTC" }),
    });
    await sweepRecurrences(env, at("2030-07-01T00:00:00Z"));
    const patched = await call(`/recurrences/${r.body.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { template: taskTemplate(acc, { description: "new text" }) },
    });
    expectStatus(patched, 200);
    await sweepRecurrences(env, at("2030-07-03T00:00:00Z"));
    let tasks = await madeTasks(acc, r.body.id);
    expect(tasks.map((t) => t.description)).toEqual([
      ...Array(7).fill("weekly delivery"),
      "new text",
      "new text",
    ]);

    await call(`/recurrences/${r.body.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { is_active: false },
    });
    await sweepRecurrences(env, at("2030-07-05T00:00:00Z"));
    expect(await madeTasks(acc, r.body.id)).toHaveLength(9);

    expectStatus(await call(`/recurrences/${r.body.id}/`, { method: "DELETE", token: acc.admin.token }), 204);
    await sweepRecurrences(env, at("2030-07-10T00:00:00Z"));
    tasks = await madeTasks(acc, r.body.id);
    expect(tasks).toHaveLength(9);
    // The tasks made stay as they were, link included.
    expect(tasks[0].recurrence).toBe(r.body.url);
  });

  it("a sweep that read a recurrence just before its DELETE makes nothing (the claim's foreign key)", async () => {
    const acc = await newAccount();
    const r = await call("/recurrences/", {
      token: acc.admin.token,
      body: recurrenceBody(acc, { rule: "FREQ=DAILY", start: "2030-09-01T09:00:00", timezone: "UTC" }),
    });
    const row = await stored
      .prepare("SELECT * FROM recurrences WHERE id = ?")
      .bind(r.body.id)
      .first<RecurrenceRow>();
    expectStatus(await call(`/recurrences/${r.body.id}/`, { method: "DELETE", token: acc.admin.token }), 204);
    const made = await makeOccurrence(env, creatorPrincipal(row!), row!, at("2030-09-01T09:00:00Z"), "");
    expect(made).toEqual({ made: false });
    expect(await madeTasks(acc, r.body.id)).toEqual([]);
  });

  it("assigns every occurrence to the recurrence's assignee over the template's", async () => {
    const acc = await newAccount();
    const first = await addUser(acc, "worker", "first");
    const second = await addUser(acc, "worker", "second");
    const r = await call("/tasks/", {
      token: acc.admin.token,
      body: taskTemplate(acc, {
        assignee: first.user,
        recurrence: {
          rule: "FREQ=DAILY;COUNT=3",
          start: "2030-08-01T09:00:00",
          timezone: "UTC",
          assignee: second.user,
        },
      }),
    });
    expectStatus(r, 201);
    expect(r.body).toMatchObject({ assignee: second.user, state: "assigned" });
    await sweepRecurrences(env, at("2030-08-01T00:00:00Z"));
    const recurrenceId = r.body.recurrence.split("/").at(-2);
    const tasks = await madeTasks(acc, recurrenceId);
    expect(tasks.map((t) => t.assignee)).toEqual([second.user, second.user, second.user]);
    // COUNT=3 is spent: nothing is left.
    const read = await call(r.body.recurrence, { token: acc.admin.token });
    expect(read.body.next_occurrence).toBeNull();
    // The worker sees its tasks, not the recurrence.
    expectStatus(await call(r.body.recurrence, { token: second.token }), 403);
  });
});
