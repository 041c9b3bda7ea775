import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { insertTask, taskRow } from "../factories";
import { call, defineMetafields, expectStatus, newAccount } from "../helpers";
import { stored } from "../stored";

// A model written from the contract's table (§5), independent of src/domain: the admin
// assigns tasks to itself, so it is the assignee for accept/unaccept/reject too.
const ALL = [
  "draft",
  "scheduled",
  "unassigned",
  "assigned",
  "accepted",
  "transit",
  "active",
  "completed",
  "failed",
  "cancelled",
];
const TABLE: Record<string, Record<string, string>> = {
  assign: { draft: "assigned", unassigned: "assigned", scheduled: "scheduled" },
  reassign: {
    unassigned: "assigned",
    assigned: "assigned",
    accepted: "assigned",
    transit: "assigned",
    active: "assigned",
    scheduled: "scheduled",
  },
  unassign: { draft: "unassigned", assigned: "unassigned", accepted: "unassigned", scheduled: "scheduled" },
  accept: { assigned: "accepted" },
  unaccept: { accepted: "assigned" },
  reject: { assigned: "unassigned", accepted: "unassigned" },
  transit: { assigned: "transit", accepted: "transit" },
  activate: { assigned: "active", accepted: "active", transit: "active" },
  complete: { transit: "completed", active: "completed" },
  fail: { assigned: "failed", accepted: "failed", transit: "failed", active: "failed" },
  cancel: Object.fromEntries(
    ALL.filter((s) => !["completed", "failed", "cancelled"].includes(s)).map((s) => [s, "cancelled"]),
  ),
  restart: { failed: "?" },
  update: Object.fromEntries(ALL.filter((s) => !["completed", "cancelled"].includes(s)).map((s) => [s, s])),
};

function model(start: { state: string; assigned: boolean }, actions: string[]) {
  let { state, assigned } = start;
  const outcomes: string[] = [];
  for (const a of actions) {
    let next: string | undefined = TABLE[a][state];
    if (next && ["accept", "unaccept", "reject"].includes(a) && !assigned) next = undefined;
    if (!next) {
      outcomes.push("rejected");
      continue;
    }
    if (a === "restart") next = assigned ? "assigned" : "unassigned";
    if (a === "assign" || a === "reassign") assigned = true;
    if (a === "unassign" || a === "reject") assigned = false;
    state = next;
    outcomes.push("accepted");
  }
  return { state, assigned, outcomes };
}

describe("task commands: property", () => {
  it("random command sequences through the API end where the model says, each with exactly one outcome", async () => {
    const acc = await newAccount();
    await defineMetafields(acc, "tasks", { n: "integer" });
    // Every run's task is the admin's: with the default limit of 1, tasks left in transit by
    // earlier runs would (rightly) block later ones. The limit has its own tests.
    await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { transit_active_limit: null },
    });
    let seq = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ALL.filter((s) => s !== "scheduled")),
        fc.array(fc.constantFrom(...Object.keys(TABLE)), { minLength: 1, maxLength: 25 }),
        async (startState, actions) => {
          const assigned =
            ["assigned", "accepted", "transit", "active"].includes(startState) ||
            (startState === "failed" && seq % 2 === 0);
          const task = await insertTask(acc.account.id, {
            state: startState,
            assigneeId: assigned ? acc.admin.userId : null,
          });
          const body = actions.map((action) => ({
            task: task.url,
            external_id: `prop-${task.id}-${seq++}`,
            time: new Date().toISOString(),
            action,
            ...(action === "assign" || action === "reassign" ? { assignee: acc.admin.user } : {}),
            ...(action === "update" ? { task_data: { metafields: { n: seq } } } : {}),
          }));
          const r = await call("/task_commands/", { token: acc.admin.token, body });
          expectStatus(r, 201);
          const expected = model({ state: startState, assigned }, actions);
          expect(r.body.map((c: any) => c.state)).toEqual(expected.outcomes);
          const row = await taskRow(task.id);
          expect(row.state).toBe(expected.state);
          expect(row.assignee_id !== null).toBe(expected.assigned);
          const count = await stored
            .prepare(
              "SELECT COUNT(*) AS n, SUM(state IN ('accepted','rejected')) AS done FROM task_commands WHERE task_id = unhex(?, '-')",
            )
            .bind(task.id)
            .first<{ n: number; done: number }>();
          expect(count).toEqual({ n: actions.length, done: actions.length });
        },
      ),
      { numRuns: 25 },
    );
  });
});
