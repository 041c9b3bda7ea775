import { describe, expect, it } from "vitest";
import type { TaskListQueryInput } from "../../src/schemas/tasks";
import type { Principal } from "../../src/services/auth/principal";
import { ORDERINGS, pageStatements, planTaskList } from "../../src/services/tasks/list";
import { principalFor } from "../helpers";
import { stored } from "../stored";

// The issue asks that lists stay fast at a million tasks in one account: no list may scan the
// tasks table. This runs EXPLAIN QUERY PLAN on the exact statements the list service builds,
// for every filter and ordering, first page and continued pages (in both null ranges), as a
// dispatcher and as a worker, and fails on any `SCAN tasks` (`SEARCH tasks USING INDEX` is the
// index range that keeps a page's cost independent of the table's size).

const ID = "01a20000-0000-7000-8000-000000000000";
const TIME = "2030-01-01T00:00:00Z";

const principal = (role: Principal["role"]) =>
  principalFor({ userId: ID, email: "x@example.test", accountId: ID }, role);

const FILTERS: TaskListQueryInput[] = [
  {},
  { state: "assigned" },
  { state: "assigned,accepted,transit" },
  { assignee: ID },
  { assignee: ID, state: "assigned" },
  { category: "pick_up" },
  { category: "pick_up,service" },
  { complete_after__gte: TIME },
  { complete_before__lte: TIME },
  { complete_after__gte: TIME, complete_before__lte: TIME },
  { order: ID },
  { client: ID },
  { route: ID },
  { client: ID, state: "assigned" },
  { contact_address: ID },
  { contact_address__external_id: "ext" },
  { task_import: ID },
  { address__geocoded_at: TIME },
  { address__geocoded_at__gte: TIME },
  { address__geocoded_at__lte: TIME },
  { address__geocoded_at__isnull: "true" },
  { address__geocoded_at__isnull: "false" },
  { address__geocode_failed_at: TIME },
  { address__geocode_failed_at__gte: TIME },
  { address__geocode_failed_at__lte: TIME },
  { address__geocode_failed_at__isnull: "false" },
  { updated_at__gt: TIME },
  { updated_at__gte: TIME },
  { updated_at_delay_latest: "true" },
  { updated_at__gt: TIME, updated_at_delay_latest: "true" },
  { metafields__door_code: "B4" },
  { metafields__pallets: "3", state: "assigned" },
  { metafields__a: "x", metafields__b: "true" },
  {
    state: "assigned",
    assignee: ID,
    category: "drop_off",
    complete_after__gte: TIME,
    order: ID,
    updated_at__gte: TIME,
  },
];

const CURSORS = [null, { v: 1_900_000_000_000, id: ID, back: false }, { v: null, id: ID, back: false }];

describe("task list query plans", () => {
  it("serves metafields__<key> from the task_metafield_values index (contract §12)", async () => {
    const plan = planTaskList(
      { metafields__door_code: "B4" },
      { principal: principal("admin"), zone: null, settleSeconds: 5 },
    );
    const [st] = pageStatements(plan, null, 51);
    const { results } = await stored
      .prepare(`EXPLAIN QUERY PLAN ${st.sql}`)
      .bind(...st.params)
      .all<{ detail: string }>();
    const details = results.map((r) => r.detail);
    expect(
      details.some((d) => /SEARCH task_metafield_values USING (COVERING )?INDEX|PRIMARY KEY/.test(d)),
      details.join(" | "),
    ).toBe(true);
    expect(
      details.some((d) => /\bSCAN (tasks|task_metafield_values)\b/.test(d)),
      details.join(" | "),
    ).toBe(false);
  });

  it("recognizes a full scan (the check below is not vacuous)", async () => {
    const { results } = await stored
      .prepare("EXPLAIN QUERY PLAN SELECT * FROM tasks WHERE description = ?")
      .bind("x")
      .all<{ detail: string }>();
    expect(results.some((r) => /\bSCAN tasks\b/.test(r.detail))).toBe(true);
  });

  it("never scans the tasks table, for any filter, ordering, page or role", async () => {
    const scans: string[] = [];
    let checked = 0;
    for (const role of ["admin", "worker"] as const) {
      for (const filter of FILTERS) {
        for (const field of ORDERINGS) {
          for (const ordering of [field, `-${field}`]) {
            const plan = planTaskList(
              { ...filter, ordering },
              { principal: principal(role), zone: null, settleSeconds: 5 },
            );
            for (const cursor of CURSORS) {
              for (const back of [false, true]) {
                const cur = cursor && { ...cursor, back };
                for (const st of pageStatements(plan, cur, 51)) {
                  const { results } = await stored
                    .prepare(`EXPLAIN QUERY PLAN ${st.sql}`)
                    .bind(...st.params)
                    .all<{ detail: string }>();
                  checked++;
                  const details = results.map((r) => r.detail);
                  if (details.some((d) => /\bSCAN tasks\b/.test(d))) {
                    scans.push(
                      `${role} ${JSON.stringify({ ...filter, ordering })}: ${st.sql} → ${details.join(" | ")}`,
                    );
                  }
                  expect(details.some((d) => /SEARCH tasks USING (COVERING )?INDEX/.test(d))).toBe(true);
                }
              }
            }
          }
        }
      }
    }
    expect(scans, scans.slice(0, 5).join("\n")).toEqual([]);
    expect(checked).toBeGreaterThan(2000);
    // Many plans, each an EXPLAIN through the Worker: about 20 s on a quiet machine, twice that
    // on a loaded one; the test is about plans, not time.
  }, 120_000);

  // The console's day filters (contract §26): their OR cannot use one index range, but the
  // account_id prefix must still bound the read (a SEARCH, never a SCAN of the table). Kept
  // apart from the matrix above, whose cost grows with every filter.
  it("reads a day or the undated through the account's index", async () => {
    for (const filter of [{ day: "2030-01-01" }, { undated: "true", state: "unassigned" }]) {
      for (const ordering of ["position", "created_at"]) {
        const plan = planTaskList(
          { ...filter, ordering },
          { principal: principal("admin"), zone: null, settleSeconds: 5 },
        );
        for (const st of pageStatements(plan, null, 501)) {
          const { results } = await stored
            .prepare(`EXPLAIN QUERY PLAN ${st.sql}`)
            .bind(...st.params)
            .all<{ detail: string }>();
          const details = results.map((r) => r.detail);
          expect(details.join(" | ")).not.toMatch(/\bSCAN tasks\b/);
        }
      }
    }
  });
});
