import { describe, expect, it } from "vitest";
import { pollFor } from "../../src/lib/poll";
import { togetherStats } from "../../src/services/task-commands/apply/together";
import { insertTask, taskRow } from "../factories";
import { addUser, call, expectStatus, newAccount, signIn, storedEvents } from "../helpers";
import { stored } from "../stored";

// Single commands whose token check their write carries are decided by their tasks' objects and
// written by the requests, together with the other runs this isolate is writing for the account
// at that moment (services/task-commands/apply/together.ts): one D1 transaction for several.

let n = 0;
const command = (taskUrl: string, position: number, externalId = `together-${Date.now()}-${n++}`) => ({
  task: taskUrl,
  external_id: externalId,
  time: new Date().toISOString(),
  action: "update",
  task_data: { position },
});
const rowsOf = (externalId: string) =>
  stored
    .prepare("SELECT state FROM task_commands WHERE external_id = ?")
    .bind(externalId)
    .all<{ state: string }>()
    .then((r) => r.results);

/** Tasks whose objects know them (one command each), for a token this isolate has settled. */
async function warmTasks(accountId: string, token: string, count: number) {
  const tasks = await Promise.all(Array.from({ length: count }, () => insertTask(accountId)));
  for (const t of tasks) expectStatus(await call("/task_commands/", { token, body: command(t.url, 1) }), 201);
  return tasks;
}

describe("single commands written together", () => {
  it("writes concurrent single commands in shared transactions, each once, with its events and one round trip", async () => {
    const acc = await newAccount();
    const tasks = await warmTasks(acc.account.id, acc.admin.token, 12);
    const before = { ...togetherStats };
    const sent = tasks.map((t, i) => command(t.url, 100 + i));
    const replies = await Promise.all(
      sent.map((body) => call("/task_commands/", { token: acc.admin.token, body })),
    );
    for (const [i, r] of replies.entries()) {
      expectStatus(r, 201);
      expect(r.body).toMatchObject({ external_id: sent[i].external_id, state: "accepted" });
      // A request whose run another request wrote still made (and counts) one D1 round trip.
      expect(r.headers.get("X-D1-Round-Trips")).toBe("1");
      expect(r.headers.get("X-D1-Bookmark")).toBeTruthy();
    }
    for (const [i, t] of tasks.entries()) {
      expect(await taskRow(t.id)).toMatchObject({ version: 3, position: 100 + i });
      expect(await rowsOf(sent[i].external_id)).toEqual([{ state: "accepted" }]);
    }
    const events = await storedEvents({ accountId: acc.account.id });
    for (const body of sent) {
      expect(
        events.filter((e) => e.type === "task_command.accepted" && e.data.external_id === body.external_id),
      ).toHaveLength(1);
    }
    // Some of the twelve shared a transaction (the isolate's writer had company).
    const runs = togetherStats.runs - before.runs;
    const transactions = togetherStats.transactions - before.transactions;
    expect(runs).toBe(12);
    expect(transactions).toBeLessThan(runs);
  });

  it("writes nothing for a revoked token's commands written with another token's, which land", async () => {
    const acc = await newAccount();
    const other = await addUser(acc, "manager");
    const session = await signIn(acc.admin.email, acc.admin.password);
    const tasks = await warmTasks(acc.account.id, session.token, 6);
    const others = await warmTasks(acc.account.id, other.token, 6);
    // The isolate has settled the session: its next commands carry its proof, which no longer holds.
    expectStatus(await call("/logout/", { method: "POST", token: session.token }), 204);
    const revoked = tasks.map((t) => command(t.url, 7));
    const fine = others.map((t) => command(t.url, 8));
    const replies = await Promise.all([
      ...revoked.map((body) => call("/task_commands/", { token: session.token, body })),
      ...fine.map((body) => call("/task_commands/", { token: other.token, body })),
    ]);
    for (const r of replies.slice(0, 6)) expectStatus(r, 401);
    for (const r of replies.slice(6)) expectStatus(r, 201);
    for (const body of revoked) expect(await rowsOf(body.external_id)).toEqual([]);
    for (const t of tasks) expect(await taskRow(t.id)).toMatchObject({ version: 2, position: 1 });
    for (const body of fine) expect(await rowsOf(body.external_id)).toEqual([{ state: "accepted" }]);
  });

  it("answers a retried command from what is stored without holding back the commands written with it", async () => {
    const acc = await newAccount();
    const tasks = await warmTasks(acc.account.id, acc.admin.token, 6);
    const first = command(tasks[0].url, 50);
    const original = await call("/task_commands/", { token: acc.admin.token, body: first });
    expectStatus(original, 201);
    const fresh = tasks.slice(1).map((t, i) => command(t.url, 60 + i));
    const replies = await Promise.all([
      call("/task_commands/", { token: acc.admin.token, body: first }),
      ...fresh.map((body) => call("/task_commands/", { token: acc.admin.token, body })),
    ]);
    expectStatus(replies[0], 200);
    expect(replies[0].body.id).toBe(original.body.id);
    for (const r of replies.slice(1)) expectStatus(r, 201);
    expect(await rowsOf(first.external_id)).toHaveLength(1);
    expect(await taskRow(tasks[0].id)).toMatchObject({ version: 3, position: 50 });
    for (const [i, t] of tasks.slice(1).entries()) {
      expect(await taskRow(t.id)).toMatchObject({ version: 3, position: 60 + i });
    }
  });

  it("applies each of many concurrent commands on one task once, in some order", async () => {
    const acc = await newAccount();
    const [task] = await warmTasks(acc.account.id, acc.admin.token, 1);
    const sent = Array.from({ length: 20 }, (_, i) => command(task.url, 200 + i));
    const replies = await Promise.all(
      sent.map((body) => call("/task_commands/", { token: acc.admin.token, body })),
    );
    for (const r of replies) expectStatus(r, 201);
    for (const body of sent) expect(await rowsOf(body.external_id)).toEqual([{ state: "accepted" }]);
    expect((await taskRow(task.id)).version).toBe(22);
  });
});

describe("pollFor", () => {
  it("gives the value once it is there, or the fallback after the time given", async () => {
    let value: string | undefined;
    setTimeout(() => {
      value = "set";
    }, 5);
    expect(await pollFor(() => value, 1000, "late")).toBe("set");
    expect(await pollFor(() => undefined, 20, "late")).toBe("late");
  });
});
