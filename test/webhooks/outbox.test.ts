import { describe, expect, it } from "vitest";
import { insertTask } from "../factories";
import { call, expectStatus, newAccount, storedEvents } from "../helpers";
import { stored } from "../stored";

const cancel = (url: string) => ({
  task: url,
  external_id: crypto.randomUUID(),
  time: new Date().toISOString(),
  action: "cancel",
});

describe("the outbox", () => {
  it("records events of an account without webhooks as already dispatched, and leaves them for the relay once it has one", async () => {
    const acc = await newAccount();
    const a = await insertTask(acc.account.id);
    expectStatus(await call("/task_commands/", { token: acc.admin.token, body: cancel(a.url) }), 201);
    const before = await stored
      .prepare("SELECT COUNT(*) AS n FROM events WHERE account_id = unhex(?, '-') AND dispatched_at IS NULL")
      .bind(acc.account.id)
      .first<{ n: number }>();
    expect(before!.n).toBe(0);

    // A `failed` webhook: the relay records its deliveries as held and sends nothing.
    const hook = await call("/webhooks/", {
      token: acc.admin.token,
      body: { url: "https://hooks.example.com/x", events: [] },
    });
    expectStatus(hook, 201);
    const paused = await call(`/webhooks/${hook.body.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { state: "failed" },
    });
    expectStatus(paused, 200);
    const b = await insertTask(acc.account.id);
    await stored.prepare("UPDATE tasks SET state = 'unassigned' WHERE id = ?").bind(b.id).run();
    const r = await call("/task_commands/", { token: acc.admin.token, body: cancel(b.url) });
    expect(r.body.state).toBe("accepted");
    const results = (await storedEvents({ accountId: acc.account.id })).filter((e) =>
      [b.id, r.body.id].includes(e.data.id),
    );
    expect(results.map((e) => e.type).sort()).toEqual(["task.state_changed", "task_command.accepted"]);
    // The relay (run after the write) turned both into held deliveries for the webhook.
    let held = 0;
    for (let i = 0; i < 50 && held < 2; i++) {
      const row = await stored
        .prepare(
          "SELECT COUNT(*) AS n FROM webhook_deliveries d JOIN webhooks w ON d.webhook_id = unhex(w.id, '-') WHERE w.account_id = ? AND d.state = 'held'",
        )
        .bind(acc.account.id)
        .first<{ n: number }>();
      held = row!.n;
      if (held < 2) await new Promise((res) => setTimeout(res, 100));
    }
    expect(held).toBe(2);
  });
});
