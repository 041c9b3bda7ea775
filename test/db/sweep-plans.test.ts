import { describe, expect, it } from "vitest";
import { lastLocationSql } from "../../src/services/eta";
import { cronLatenessSql } from "../../src/services/positions/cron";
import { archiveReadSql } from "../../src/services/retention/sources";
import { SPENT_RECORDS } from "../../src/services/retention/sweep";
import { RETAINING_ACCOUNTS_SQL } from "../../src/services/retention/tasks";
import { RETAINED } from "../../src/services/retention/windows";
import { stored } from "../stored";

// Statements that run every minute (the cron) or on every public page view must not read a
// whole table: D1 bills each row read, and these tables grow with every user, stream and
// command. EXPLAIN QUERY PLAN on the exact SQL the service runs: `SEARCH ... USING INDEX` is a
// range of an index; `SCAN <table>` would read the table through.

async function plan(sql: string): Promise<string> {
  const params = Array((sql.match(/\?1/) ? 1 : 0) || (sql.match(/\?/g) ?? []).length).fill(null);
  const { results } = await stored
    .prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<{ detail: string }>();
  return results.map((r) => r.detail).join("\n");
}

describe("statements the service runs all the time read through indexes", () => {
  it.each(Object.entries(SPENT_RECORDS))("the cron's delete of spent %s", async (_name, sql) => {
    const p = await plan(sql);
    expect(p).toMatch(/SEARCH \w+ USING INDEX/);
    expect(p).not.toMatch(/\bSCAN\b/);
  });

  it.each(RETAINED.filter((k) => k.keyed !== "webhook").map((k) => [k.kind, k] as const))(
    "the archive's batch of %s: an index range in id order, nothing sorted",
    async (_kind, k) => {
      const p = await plan(archiveReadSql(k));
      expect(p).toMatch(/SEARCH e USING (PRIMARY KEY|INDEX|COVERING INDEX)/);
      expect(p).not.toMatch(/TEMP B-TREE|SCAN e\b/);
    },
  );

  it("the cron's list of accounts that archive their finished tasks", async () => {
    const p = await plan(RETAINING_ACCOUNTS_SQL);
    expect(p).toMatch(/accounts USING COVERING INDEX accounts_retention_idx/);
  });

  it("a tracking page's last known location of the worker", async () => {
    const p = await plan(lastLocationSql("?"));
    expect(p).toMatch(/SEARCH task_commands USING INDEX task_commands_user_location_idx \(user_id=\?\)/);
    expect(p).not.toMatch(/\bSCAN\b|TEMP B-TREE/);
  });

  it("the cron's lateness check reads open assigned tasks only (contract §28)", async () => {
    const p = await plan(cronLatenessSql);
    expect(p).toMatch(/USING INDEX tasks_open_due_idx/);
    expect(p).not.toMatch(/SCAN tasks\b(?! USING)/);
  });
});
