import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ALLOWED,
  type DecideInput,
  type Decision,
  decide,
  nextStateOnSchedule,
  type Role,
  TASK_ACTIONS,
  TASK_STATES,
  type TaskAction,
  type TaskState,
} from "../../src/domain/task-state-machine";

// The contract's table (section 5), written out literally and independently of ALLOWED:
// for each (state, action) the state the task moves to, or `_` when the pair is rejected.
// The task has an assignee ("w1"); assign/reassign name another one ("w2").
const _ = null;
const STATES: TaskState[] = [
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
const ACTIONS: TaskAction[] = [
  "update",
  "assign",
  "reassign",
  "unassign",
  "accept",
  "unaccept",
  "reject",
  "transit",
  "activate",
  "complete",
  "fail",
  "cancel",
  "restart",
];
// biome-ignore format: a literal grid, one row per state, one column per action
const TABLE: Record<TaskState, (TaskState | null)[]> = {
  //            update        assign        reassign      unassign        accept      unaccept    reject          transit    activate  complete     fail      cancel       restart
  draft:      ["draft",      "assigned",   _,            "unassigned",   _,          _,          _,              _,         _,        _,           _,        "cancelled", _],
  scheduled:  ["scheduled",  "scheduled",  "scheduled",  "scheduled",    _,          _,          _,              _,         _,        _,           _,        "cancelled", _],
  unassigned: ["unassigned", "assigned",   "assigned",   _,              _,          _,          _,              _,         _,        _,           _,        "cancelled", _],
  assigned:   ["assigned",   _,            "assigned",   "unassigned",   "accepted", _,          "unassigned",   "transit", "active", _,           "failed", "cancelled", _],
  accepted:   ["accepted",   _,            "assigned",   "unassigned",   _,          "assigned", "unassigned",   "transit", "active", _,           "failed", "cancelled", _],
  transit:    ["transit",    _,            "assigned",   _,              _,          _,          _,              _,         "active", "completed", "failed", "cancelled", _],
  active:     ["active",     _,            "assigned",   _,              _,          _,          _,              _,         _,        "completed", "failed", "cancelled", _],
  completed:  [_,            _,            _,            _,              _,          _,          _,              _,         _,        _,           _,        _,           _],
  failed:     ["failed",     _,            _,            _,              _,          _,          _,              _,         _,        _,           _,        _,           "assigned"],
  cancelled:  [_,            _,            _,            _,              _,          _,          _,              _,         _,        _,           _,        _,           _],
};

function expectedTarget(state: TaskState, action: TaskAction): TaskState | null {
  return TABLE[state][ACTIONS.indexOf(action)];
}

function expectedAssignee(action: TaskAction): string | null {
  if (action === "assign" || action === "reassign") return "w2";
  if (action === "unassign" || action === "reject") return null;
  return "w1";
}

const PAIRS: [TaskState, TaskAction][] = STATES.flatMap((s) =>
  ACTIONS.map((a): [TaskState, TaskAction] => [s, a]),
);

function input(
  state: TaskState,
  action: TaskAction,
  actor: { userId: string; role: Role },
  extra: Partial<DecideInput> = {},
): DecideInput {
  return {
    task: { state, assigneeId: "w1" },
    action,
    actor,
    assigneeId: action === "assign" || action === "reassign" ? "w2" : undefined,
    account: { allowWorkerReordering: false },
    missingRequiredMetafields: [],
    ...extra,
  };
}

function expectAllowed(state: TaskState, action: TaskAction, got: Decision, target: TaskState) {
  expect(got).toEqual({
    ok: true,
    state: target,
    assigneeId: expectedAssignee(action),
    usesTransitSlot:
      (target === "transit" || target === "active") && state !== "transit" && state !== "active",
    stateChanged: target !== state,
  });
}

function errorOf(d: Decision): string {
  if (d.ok) throw new Error(`expected a rejection, got ${JSON.stringify(d)}`);
  return d.error;
}

describe("constants", () => {
  it("lists the states and actions of the interface", () => {
    expect([...TASK_STATES]).toEqual(STATES);
    expect([...TASK_ACTIONS]).toEqual(ACTIONS);
  });

  it("ALLOWED agrees with the literal table", () => {
    for (const action of ACTIONS) {
      const from = STATES.filter((s) => expectedTarget(s, action) !== null);
      expect([...ALLOWED[action]].sort()).toEqual(from.sort());
    }
  });
});

describe("every (state, action) pair", () => {
  it("covers 130 pairs", () => {
    expect(PAIRS).toHaveLength(130);
  });

  describe("system actor (no permission rules)", () => {
    it.each(PAIRS)("%s + %s", (state, action) => {
      const got = decide(input(state, action, { userId: "sys", role: "system" }));
      const target = expectedTarget(state, action);
      if (target === null)
        expect(got).toEqual({ ok: false, error: `Cannot ${action} a task in state "${state}".` });
      else expectAllowed(state, action, got, target);
    });
  });

  for (const role of ["manager", "admin", "integration"] as const) {
    describe(`dispatcher actor (${role})`, () => {
      it.each(PAIRS)("%s + %s", (state, action) => {
        const got = decide(input(state, action, { userId: "d1", role }));
        const target = expectedTarget(state, action);
        if (action === "accept" || action === "unaccept" || action === "reject") {
          expect(got).toEqual({ ok: false, error: `Only the assignee can ${action} this task.` });
        } else if (target === null) {
          expect(got).toEqual({ ok: false, error: `Cannot ${action} a task in state "${state}".` });
        } else {
          expectAllowed(state, action, got, target);
        }
      });
    });
  }

  describe("worker who is the assignee", () => {
    it.each(PAIRS)("%s + %s", (state, action) => {
      const got = decide(input(state, action, { userId: "w1", role: "worker" }));
      const target = expectedTarget(state, action);
      if (["assign", "reassign", "unassign", "cancel", "restart"].includes(action)) {
        expect(got).toEqual({ ok: false, error: `Permission denied: a worker cannot ${action} tasks.` });
      } else if (target === null) {
        expect(got).toEqual({ ok: false, error: `Cannot ${action} a task in state "${state}".` });
      } else {
        expectAllowed(state, action, got, target);
      }
    });
  });

  describe("worker who is not the assignee", () => {
    it.each(PAIRS)("%s + %s", (state, action) => {
      const got = decide(input(state, action, { userId: "w9", role: "worker" }));
      if (["assign", "reassign", "unassign", "cancel", "restart"].includes(action)) {
        expect(errorOf(got)).toBe(`Permission denied: a worker cannot ${action} tasks.`);
      } else if (action === "accept" || action === "unaccept" || action === "reject") {
        expect(errorOf(got)).toBe(`Only the assignee can ${action} this task.`);
      } else {
        expect(errorOf(got)).toBe("Permission denied: this task is not assigned to you.");
      }
    });
  });
});

describe("error texts", () => {
  it("names the action and the current state", () => {
    const d = decide(input("accepted", "accept", { userId: "w1", role: "worker" }));
    expect(d).toEqual({ ok: false, error: 'Cannot accept a task in state "accepted".' });
    expect(errorOf(decide(input("completed", "cancel", { userId: "m", role: "manager" })))).toBe(
      'Cannot cancel a task in state "completed".',
    );
    expect(errorOf(decide(input("cancelled", "update", { userId: "m", role: "manager" })))).toBe(
      'Cannot update a task in state "cancelled".',
    );
  });

  it("permission is checked before the transition", () => {
    // A worker that does not hold the task learns nothing about its state.
    expect(errorOf(decide(input("completed", "update", { userId: "w9", role: "worker" })))).toBe(
      "Permission denied: this task is not assigned to you.",
    );
    expect(errorOf(decide(input("completed", "accept", { userId: "m", role: "manager" })))).toBe(
      "Only the assignee can accept this task.",
    );
  });

  it("the transition is checked before the command's preconditions", () => {
    const m = { userId: "m", role: "manager" as const };
    expect(errorOf(decide(input("completed", "assign", m, { assigneeId: null })))).toBe(
      'Cannot assign a task in state "completed".',
    );
    expect(
      errorOf(
        decide(
          input(
            "assigned",
            "complete",
            { userId: "w1", role: "worker" },
            { missingRequiredMetafields: ["x"] },
          ),
        ),
      ),
    ).toBe('Cannot complete a task in state "assigned".');
  });

  it("rejects unknown actions and states coming from untyped input", () => {
    const m = { userId: "m", role: "manager" as const };
    expect(errorOf(decide(input("assigned", "explode" as TaskAction, m)))).toBe('Unknown action "explode".');
    expect(errorOf(decide(input("limbo" as TaskState, "update", m)))).toBe('Unknown task state "limbo".');
  });
});

describe("assign and reassign need an assignee", () => {
  const m = { userId: "m", role: "manager" as const };
  for (const action of ["assign", "reassign"] as const) {
    for (const assigneeId of [undefined, null, ""]) {
      it(`${action} with assignee ${JSON.stringify(assigneeId)}`, () => {
        const d = decide(
          input("unassigned", action, m, { assigneeId, task: { state: "unassigned", assigneeId: null } }),
        );
        expect(d).toEqual({ ok: false, error: `An assignee is required to ${action} a task.` });
      });
    }
  }

  it("assign from unassigned and draft sets the assignee", () => {
    for (const state of ["unassigned", "draft"] as const) {
      expect(
        decide(input(state, "assign", m, { task: { state, assigneeId: null }, assigneeId: "w5" })),
      ).toEqual({
        ok: true,
        state: "assigned",
        assigneeId: "w5",
        usesTransitSlot: false,
        stateChanged: true,
      });
    }
  });

  it("reassign from transit and active moves back to assigned with the new worker", () => {
    for (const state of ["transit", "active"] as const) {
      expect(decide(input(state, "reassign", m, { assigneeId: "w7" }))).toMatchObject({
        ok: true,
        state: "assigned",
        assigneeId: "w7",
        stateChanged: true,
      });
    }
  });

  it("reassign may carry task_data.position from a dispatcher", () => {
    expect(decide(input("assigned", "reassign", m, { taskData: { position: 3 } }))).toMatchObject({
      ok: true,
      state: "assigned",
      assigneeId: "w2",
      stateChanged: false,
    });
  });
});

describe("scheduled task", () => {
  const m = { userId: "m", role: "manager" as const };

  it("assign keeps scheduled and sets the assignee", () => {
    const d = decide(
      input("scheduled", "assign", m, { task: { state: "scheduled", assigneeId: null }, assigneeId: "w3" }),
    );
    expect(d).toEqual({
      ok: true,
      state: "scheduled",
      assigneeId: "w3",
      usesTransitSlot: false,
      stateChanged: false,
    });
  });

  it("reassign keeps scheduled and replaces the assignee", () => {
    const d = decide(input("scheduled", "reassign", m, { assigneeId: "w4" }));
    expect(d).toEqual({
      ok: true,
      state: "scheduled",
      assigneeId: "w4",
      usesTransitSlot: false,
      stateChanged: false,
    });
  });

  it("unassign keeps scheduled and clears the assignee", () => {
    const d = decide(input("scheduled", "unassign", m));
    expect(d).toEqual({
      ok: true,
      state: "scheduled",
      assigneeId: null,
      usesTransitSlot: false,
      stateChanged: false,
    });
  });

  it("unassign of a scheduled task without assignee is accepted", () => {
    const d = decide(input("scheduled", "unassign", m, { task: { state: "scheduled", assigneeId: null } }));
    expect(d).toMatchObject({ ok: true, state: "scheduled", assigneeId: null });
  });

  it("nextStateOnSchedule: assigned with an assignee, unassigned without", () => {
    expect(nextStateOnSchedule({ state: "scheduled", assigneeId: "w1" })).toBe("assigned");
    expect(nextStateOnSchedule({ state: "scheduled", assigneeId: null })).toBe("unassigned");
  });

  it("nextStateOnSchedule: nothing to do when the task is no longer scheduled", () => {
    for (const state of STATES.filter((s) => s !== "scheduled")) {
      expect(nextStateOnSchedule({ state, assigneeId: "w1" })).toBeNull();
    }
  });
});

describe("unassign from draft", () => {
  it("releases the task to the pool", () => {
    const d = decide(input("draft", "unassign", { userId: "m", role: "manager" }));
    expect(d).toEqual({
      ok: true,
      state: "unassigned",
      assigneeId: null,
      usesTransitSlot: false,
      stateChanged: true,
    });
  });
});

describe("restart", () => {
  const m = { userId: "m", role: "manager" as const };
  it("goes to assigned when the task has an assignee", () => {
    expect(decide(input("failed", "restart", m))).toEqual({
      ok: true,
      state: "assigned",
      assigneeId: "w1",
      usesTransitSlot: false,
      stateChanged: true,
    });
  });
  it("goes to unassigned when it has none", () => {
    expect(decide(input("failed", "restart", m, { task: { state: "failed", assigneeId: null } }))).toEqual({
      ok: true,
      state: "unassigned",
      assigneeId: null,
      usesTransitSlot: false,
      stateChanged: true,
    });
  });
  it("is rejected from any other state", () => {
    for (const state of STATES.filter((s) => s !== "failed")) {
      expect(errorOf(decide(input(state, "restart", m)))).toBe(`Cannot restart a task in state "${state}".`);
    }
  });
});

describe("transit slot flag", () => {
  const w = { userId: "w1", role: "worker" as const };
  it.each([
    ["assigned", "transit", true],
    ["accepted", "transit", true],
    ["assigned", "activate", true],
    ["accepted", "activate", true],
    ["transit", "activate", false],
    ["transit", "update", false],
    ["active", "update", false],
    ["transit", "complete", false],
    ["active", "fail", false],
    ["assigned", "accept", false],
  ] as [TaskState, TaskAction, boolean][])("%s + %s -> %s", (state, action, flag) => {
    const d = decide(input(state, action, w));
    expect(d.ok).toBe(true);
    if (d.ok) expect(d.usesTransitSlot).toBe(flag);
  });

  it("is never set by a dispatcher's reassign out of transit/active", () => {
    const d = decide(input("active", "reassign", { userId: "m", role: "manager" }));
    expect(d).toMatchObject({ ok: true, state: "assigned", usesTransitSlot: false });
  });
});

describe("role rules", () => {
  const worker = { userId: "w1", role: "worker" as const };

  it("a worker may update its own task", () => {
    expect(decide(input("accepted", "update", worker, { taskData: { metafields: { a: 1 } } }))).toEqual({
      ok: true,
      state: "accepted",
      assigneeId: "w1",
      usesTransitSlot: false,
      stateChanged: false,
    });
  });

  it("a worker may not act on an unassigned task", () => {
    const d = decide(
      input("unassigned", "update", worker, { task: { state: "unassigned", assigneeId: null } }),
    );
    expect(errorOf(d)).toBe("Permission denied: this task is not assigned to you.");
  });

  it("a worker may reorder only when the account allows it", () => {
    const withPos = { taskData: { position: 2.5 } };
    expect(errorOf(decide(input("assigned", "update", worker, withPos)))).toBe(
      "Permission denied: workers may not reorder tasks in this account.",
    );
    expect(
      decide(input("assigned", "update", worker, { ...withPos, account: { allowWorkerReordering: true } })),
    ).toMatchObject({ ok: true, state: "assigned" });
    // a null position is a reordering too
    expect(
      errorOf(
        decide(input("assigned", "update", worker, { taskData: { position: null as unknown as number } })),
      ),
    ).toBe("Permission denied: workers may not reorder tasks in this account.");
  });

  it("dispatchers may reorder whatever the account setting", () => {
    for (const role of ["admin", "manager", "integration"] as const) {
      expect(
        decide(input("assigned", "update", { userId: "d", role }, { taskData: { position: 1 } })),
      ).toMatchObject({
        ok: true,
      });
    }
  });

  it("accept/unaccept/reject only by the assignee, whatever the role", () => {
    for (const role of ["admin", "manager", "integration", "worker"] as const) {
      expect(errorOf(decide(input("assigned", "accept", { userId: "x", role })))).toBe(
        "Only the assignee can accept this task.",
      );
      expect(errorOf(decide(input("accepted", "unaccept", { userId: "x", role })))).toBe(
        "Only the assignee can unaccept this task.",
      );
      expect(errorOf(decide(input("assigned", "reject", { userId: "x", role })))).toBe(
        "Only the assignee can reject this task.",
      );
    }
  });

  it("a manager who is the task's assignee may accept it", () => {
    expect(decide(input("assigned", "accept", { userId: "w1", role: "manager" }))).toMatchObject({
      ok: true,
      state: "accepted",
    });
  });

  it("reject clears the assignee", () => {
    expect(decide(input("accepted", "reject", worker))).toEqual({
      ok: true,
      state: "unassigned",
      assigneeId: null,
      usesTransitSlot: false,
      stateChanged: true,
    });
  });

  it("the system role may do what the table allows, including accept on behalf of the assignee", () => {
    expect(decide(input("assigned", "accept", { userId: "sys", role: "system" }))).toMatchObject({
      ok: true,
      state: "accepted",
      assigneeId: "w1",
    });
  });
});

describe("complete and required metafields", () => {
  const w = { userId: "w1", role: "worker" as const };
  it("is rejected while required metafields are missing, naming them", () => {
    const d = decide(input("active", "complete", w, { missingRequiredMetafields: ["signature", "photo"] }));
    expect(d).toEqual({
      ok: false,
      error: "Cannot complete the task: required metafields are not set: signature, photo.",
    });
  });
  it("is accepted when none are missing (or the list is absent)", () => {
    expect(decide(input("active", "complete", w, { missingRequiredMetafields: [] }))).toMatchObject({
      ok: true,
      state: "completed",
    });
    expect(decide(input("transit", "complete", w, { missingRequiredMetafields: undefined }))).toMatchObject({
      ok: true,
      state: "completed",
    });
  });
});

describe("properties", () => {
  const TERMINAL: TaskState[] = ["completed", "cancelled"];
  const HOLDING: TaskState[] = ["assigned", "accepted", "transit", "active"];
  const startArb = fc.record({
    state: fc.constantFrom(...STATES),
    hasAssignee: fc.boolean(),
  });
  const stepArb = fc.record({
    action: fc.constantFrom(...ACTIONS),
    assignee: fc.constantFrom<string | null | undefined>("w1", "w2", null, undefined),
    position: fc.option(fc.double({ noNaN: true }), { nil: undefined }),
  });

  function consistentStart(s: { state: TaskState; hasAssignee: boolean }) {
    // A task held by a worker has an assignee; an unassigned one has none.
    const assigneeId = HOLDING.includes(s.state)
      ? "w1"
      : s.state === "unassigned"
        ? null
        : s.hasAssignee
          ? "w1"
          : null;
    return { state: s.state, assigneeId };
  }

  it("a manager's random command sequences keep the task in a valid state; completed/cancelled are terminal", () => {
    fc.assert(
      fc.property(startArb, fc.array(stepArb, { maxLength: 40 }), (start, steps) => {
        let task = consistentStart(start);
        for (const step of steps) {
          const before = task;
          const d = decide({
            task,
            action: step.action,
            actor: { userId: "m", role: "manager" },
            assigneeId: step.assignee,
            taskData: step.position === undefined ? undefined : { position: step.position },
            account: { allowWorkerReordering: false },
          });
          if (TERMINAL.includes(before.state)) {
            // Nothing is allowed from completed or cancelled, not even update or cancel.
            expect(d.ok).toBe(false);
          }
          if (!d.ok) {
            expect(d.error.length).toBeGreaterThan(0);
            continue;
          }
          expect(TASK_STATES).toContain(d.state);
          expect(d.stateChanged).toBe(d.state !== before.state);
          if (before.state === "failed") expect(["failed", "assigned", "unassigned"]).toContain(d.state);
          task = { state: d.state, assigneeId: d.assigneeId };
          if (HOLDING.includes(task.state)) expect(task.assigneeId).not.toBeNull();
          if (task.state === "unassigned") expect(task.assigneeId).toBeNull();
        }
      }),
      { numRuns: 500 },
    );
  });

  it("with mixed actors, a rejected command never changes anything and workers never touch others' tasks", () => {
    const actorArb = fc.constantFrom<{ userId: string; role: Role }>(
      { userId: "sys", role: "system" },
      { userId: "m", role: "manager" },
      { userId: "a", role: "admin" },
      { userId: "i", role: "integration" },
      { userId: "w1", role: "worker" },
      { userId: "w2", role: "worker" },
    );
    fc.assert(
      fc.property(
        startArb,
        fc.array(fc.tuple(stepArb, actorArb, fc.boolean()), { maxLength: 40 }),
        (start, steps) => {
          let task = consistentStart(start);
          for (const [step, actor, reorder] of steps) {
            const d = decide({
              task,
              action: step.action,
              actor,
              assigneeId: step.assignee,
              taskData: step.position === undefined ? undefined : { position: step.position },
              account: { allowWorkerReordering: reorder },
            });
            if (!d.ok) continue;
            expect(ALLOWED[step.action]).toContain(task.state);
            if (actor.role === "worker") expect(task.assigneeId).toBe(actor.userId);
            if (TERMINAL.includes(task.state)) throw new Error("left a terminal state");
            expect(d.usesTransitSlot).toBe(
              (d.state === "transit" || d.state === "active") &&
                task.state !== "transit" &&
                task.state !== "active",
            );
            task = { state: d.state, assigneeId: d.assigneeId };
            if (HOLDING.includes(task.state)) expect(task.assigneeId).not.toBeNull();
            if (task.state === "unassigned") expect(task.assigneeId).toBeNull();
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
