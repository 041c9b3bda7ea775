import { describe, expect, it } from "vitest";
import { uuidText } from "../../src/db/uuid-bytes";
import { eventStatement } from "../../src/services/events/outbox";
import { call, expectStatus, newAccount } from "../helpers";
import { stored } from "../stored";

/** Events a minute old (past the settle delay), in order. */
async function seedEvents(accountId: string, types: string[]) {
  const base = Date.now() - 60_000;
  await stored.batch(
    types.map((type, i) =>
      eventStatement(stored, { accountId, type: type as any, objectId: null, data: { i }, now: base + i }),
    ),
  );
  const { results } = await stored
    .prepare(
      `SELECT ${uuidText("id")} AS id, type, created_at FROM events WHERE account_id = unhex(?, '-') ORDER BY events.id`,
    )
    .bind(accountId)
    .all<{ id: string; type: string; created_at: number }>();
  return results;
}

describe("GET /events/", () => {
  it("pages forward with after, back with previous, oldest first, account-scoped", async () => {
    const acc = await newAccount();
    const other = await newAccount();
    const evs = await seedEvents(acc.account.id, [
      "task.created",
      "order.created",
      "task.updated",
      "order.created",
      "task.deleted",
    ]);
    await seedEvents(other.account.id, ["task.created"]);
    const t = acc.admin.token;

    const p1 = await call("/events/?page_size=2", { token: t });
    expectStatus(p1, 200);
    expect(p1.body.previous).toBeNull();
    expect(p1.body.results).toEqual([
      {
        id: evs[0].id,
        type: "task.created",
        created_at: new Date(evs[0].created_at).toISOString(),
        data: { i: 0 },
      },
      {
        id: evs[1].id,
        type: "order.created",
        created_at: new Date(evs[1].created_at).toISOString(),
        data: { i: 1 },
      },
    ]);
    expect(p1.body.next).toBe(`https://api.test/events/?page_size=2&after=${evs[1].id}`);

    const p2 = await call(p1.body.next, { token: t });
    expect(p2.body.results.map((e: any) => e.id)).toEqual([evs[2].id, evs[3].id]);
    const p3 = await call(p2.body.next, { token: t });
    expect(p3.body.results.map((e: any) => e.id)).toEqual([evs[4].id]);
    expect(p3.body.next).toBeNull();

    const back = await call(p2.body.previous, { token: t });
    expect(back.body.results.map((e: any) => e.id)).toEqual([evs[0].id, evs[1].id]);
    expect(back.body.previous).toBeNull();
    expect(back.body.next).toBe(`https://api.test/events/?page_size=2&after=${evs[1].id}`);

    // Catching up from the last processed id.
    const caughtUp = await call(`/events/?after=${evs[4].id}`, { token: t });
    expect(caughtUp.body).toMatchObject({ next: null, previous: null, results: [] });
    const from = await call(`/events/?after=${evs[2].id}`, { token: t });
    expect(from.body.results.map((e: any) => e.id)).toEqual([evs[3].id, evs[4].id]);

    const orders = await call("/events/?type=order.created,task.deleted", { token: t });
    expect(orders.body.results.map((e: any) => e.id)).toEqual([evs[1].id, evs[3].id, evs[4].id]);

    const one = await call(`/events/${evs[0].id}/`, { token: t });
    expectStatus(one, 200);
    expect(one.body).toEqual(p1.body.results[0]);
    expectStatus(await call(`/events/${evs[0].id}/`, { token: other.admin.token }), 404);
  });

  it("lists an event once it has settled (so a late commit is never skipped)", async () => {
    const acc = await newAccount();
    await eventStatement(stored, {
      accountId: acc.account.id,
      type: "task.created",
      objectId: null,
      data: {},
    }).run();
    const r = await call("/events/", { token: acc.admin.token });
    expect(r.body.results).toEqual([]);
  });

  it("validates its query strictly", async () => {
    const acc = await newAccount();
    const t = acc.admin.token;
    const unknown = await call("/events/?cursor=abc", { token: t });
    expectStatus(unknown, 400);
    expect(unknown.body).toEqual({ cursor: ["Unknown query parameter."] });
    const bad = await call("/events/?after=nope", { token: t });
    expectStatus(bad, 400);
    expect(bad.body).toEqual({ after: ["Invalid cursor: an event id is expected."] });
    const type = await call("/events/?type=task.exploded", { token: t });
    expectStatus(type, 400);
    expect(type.body).toEqual({ type: ['"task.exploded" is not a valid event name.'] });
    const both = await call(`/events/?after=${crypto.randomUUID()}&before=${crypto.randomUUID()}`, {
      token: t,
    });
    expectStatus(both, 400);
    expect(both.body.non_field_errors).toEqual(["Give `after` or `before`, not both."]);
    expectStatus(await call("/events/?page_size=501", { token: t }), 400);
  });
});
