import { describe, expect, it } from "vitest";
import {
  applyEvent,
  type BoardTask,
  keepUnchanged,
  lanes,
  moveCommands,
  onDay,
  UNASSIGNED,
} from "../../web/console/board";

// The console's pure parts (contract §26): the day, the lanes, the stream's events, the moves.
const DAY = { start: Date.parse("2030-03-05T00:00:00Z"), end: Date.parse("2030-03-06T00:00:00Z") };
const W1 = "http://x/users/w1/";
const W2 = "http://x/users/w2/";

let n = 0;
function task(over: Partial<BoardTask> = {}): BoardTask {
  n++;
  return {
    id: `t${n}`,
    url: `http://x/tasks/t${n}/`,
    state: "unassigned",
    assignee: null,
    position: null,
    complete_after: "2030-03-05T08:00:00Z",
    complete_before: "2030-03-05T10:00:00Z",
    scheduled_time: null,
    updated_at: "2030-03-01T00:00:00.000Z",
    address: { raw_address: `Street ${n}` },
    contact: { name: `C${n}` },
    ...over,
  };
}

describe("the day board", () => {
  it("puts a task on the day as the API's day filter does, and undated unassigned ones too", () => {
    expect(onDay(task(), DAY)).toBe(true);
    expect(onDay(task({ complete_after: "2030-03-06T00:00:00Z", complete_before: null }), DAY)).toBe(false);
    expect(onDay(task({ complete_after: null, complete_before: "2030-03-05T23:59:00Z" }), DAY)).toBe(true);
    expect(
      onDay(
        task({ complete_after: null, complete_before: null, scheduled_time: "2030-03-05T12:00:00Z" }),
        DAY,
      ),
    ).toBe(true);
    expect(onDay(task({ complete_after: null, complete_before: null }), DAY)).toBe(true);
    expect(
      onDay(task({ complete_after: null, complete_before: null, state: "assigned", assignee: W1 }), DAY),
    ).toBe(false);
  });

  it("lists Unassigned and each worker in route order, filtered by search and state", () => {
    const a = task({ assignee: W1, state: "assigned", position: 2 });
    const b = task({ assignee: W1, state: "assigned", position: 1 });
    const c = task({ assignee: W1, state: "assigned", position: null });
    const u = task({ contact: { name: "Virtanen" } });
    const other = task({ assignee: "http://x/users/gone/", state: "assigned" });
    const l = lanes([a, b, c, u, other], [W1, W2], DAY, { search: "", state: "" });
    expect([...l.keys()]).toEqual([UNASSIGNED, W1, W2]);
    expect(l.get(W1)!.map((t) => t.id)).toEqual([b.id, a.id, c.id]);
    expect(l.get(UNASSIGNED)!.map((t) => t.id)).toEqual([u.id]);
    expect(l.get(W2)).toEqual([]);
    const found = lanes([a, b, u], [W1], DAY, { search: "virta", state: "" });
    expect(found.get(UNASSIGNED)!.map((t) => t.id)).toEqual([u.id]);
    expect(found.get(W1)).toEqual([]);
    expect(lanes([a, u], [W1], DAY, { search: "", state: "assigned" }).get(UNASSIGNED)).toEqual([]);
  });

  it("applies stream events idempotently, never winding a task back", () => {
    const t1 = task();
    let tasks = new Map([[t1.id, t1]]);
    const newer = { ...t1, state: "assigned", assignee: W1, updated_at: "2030-03-02T00:00:00.000Z" };
    tasks = applyEvent(tasks, { type: "task_command.accepted", data: { id: "cmd", task: newer } }) ?? tasks;
    expect(tasks.get(t1.id)!.assignee).toBe(W1);
    // A replay (the same event again after a reconnect) or an older version changes nothing.
    const again = applyEvent(tasks, { type: "task.state_changed", data: t1 });
    expect(again).toBeNull();
    const created = task();
    tasks = applyEvent(tasks, { type: "task.created", data: created }) ?? tasks;
    expect(tasks.has(created.id)).toBe(true);
    tasks = applyEvent(tasks, { type: "task.deleted", data: { id: created.id } }) ?? tasks;
    expect(tasks.has(created.id)).toBe(false);
    expect(applyEvent(tasks, { type: "order.created", data: {} })).toBeNull();
  });

  it("turns a move into commands: assign then a position between the neighbours", () => {
    let k = 0;
    const id = () => `e${++k}`;
    const a = task({ assignee: W1, state: "assigned", position: 1 });
    const b = task({ assignee: W1, state: "assigned", position: 2 });
    const u = task();
    const between = moveCommands(u, W1, [a, b], 1, id);
    expect(between.commands.map((c) => [c.action, c.assignee, c.task_data])).toEqual([
      ["assign", W1, undefined],
      ["update", undefined, { position: 1.5 }],
    ]);
    expect(new Set(between.commands.map((c) => c.external_id)).size).toBe(2);
    const end = moveCommands(u, W1, [a, b], 2, id);
    expect(end.commands.at(-1)!.task_data).toEqual({ position: 3 });
    // From another worker: one reassign carrying the position.
    const moved = moveCommands(task({ assignee: W2, state: "assigned", position: 7 }), W1, [a, b], 0, id);
    expect(moved.commands.map((c) => [c.action, c.task_data])).toEqual([["reassign", { position: 0 }]]);
    // Neighbours without positions: the lane is numbered 1…n in one batch.
    const c = task({ assignee: W1, state: "assigned" });
    const numbered = moveCommands(u, W1, [c, a], 1, id);
    expect(
      numbered.commands.map((x) => [x.task === u.url ? "u" : x.task === c.url ? "c" : "a", x.action]),
    ).toEqual([
      ["u", "assign"],
      ["c", "update"],
      ["u", "update"],
      ["a", "update"],
    ]);
    expect(numbered.positions.get(u.id)).toBe(2);
    expect(moveCommands(a, UNASSIGNED, [], 0, id).commands.map((x) => x.action)).toEqual(["unassign"]);
  });
});

describe("keepUnchanged", () => {
  it("keeps the arrays of lanes a change did not touch", () => {
    const a = task();
    const b = task();
    const prev = new Map([
      ["x", [a]],
      ["y", [b]],
    ]);
    const b2 = { ...b, state: "assigned" };
    const next = keepUnchanged(
      prev,
      new Map([
        ["x", [a]],
        ["y", [b2]],
      ]),
    );
    expect(next.get("x")).toBe(prev.get("x"));
    expect(next.get("y")).not.toBe(prev.get("y"));
  });
});
