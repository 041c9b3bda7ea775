import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decide, TASK_ACTIONS, TASK_STATES } from "../../../domain/task-state-machine";
import type { TaskRow } from "../../tasks/types";
import type { Actor, CommandInput } from "../types";
import { decisionInput, planRun } from "./plan";

/** The planner is pure: checked on random tasks and command sequences, without D1. */
const WORKERS = ["w1", "w2"];

const taskArb = fc.record({
  state: fc.constantFrom(...TASK_STATES),
  assignee_id: fc.constantFrom(null, ...WORKERS),
  position: fc.constantFrom(null, 1, 2.5),
  version: fc.nat({ max: 50 }),
});

const commandArb = fc.record({
  action: fc.constantFrom(...TASK_ACTIONS),
  assigneeId: fc.constantFrom(null, ...WORKERS),
  taskData: fc.oneof(
    fc.constant({}),
    fc.record({ position: fc.double({ min: 0, max: 100, noNaN: true }) }),
    fc.record({ metafields: fc.dictionary(fc.constantFrom("a", "b"), fc.string({ maxLength: 3 })) }),
    fc.record({ duration: fc.constantFrom("00:10:00", null) }),
  ),
});

const actorArb = fc.record({
  userId: fc.constantFrom(...WORKERS, "admin"),
  role: fc.constantFrom("admin" as const, "worker" as const, "manager" as const),
  accountId: fc.constant("acc"),
  allowWorkerReordering: fc.boolean(),
  transitActiveLimit: fc.constantFrom(null, 1),
});

function row(t: {
  state: TaskRow["state"];
  assignee_id: string | null;
  position: number | null;
  version: number;
}): TaskRow {
  return {
    id: "task",
    account_id: "acc",
    state: t.state,
    category: "drop_off",
    description: "",
    address: '{"raw_address":"Tallinn"}',
    geocoded_at: null,
    geocode_failed_at: null,
    contact: "{}",
    complete_after: null,
    complete_before: null,
    scheduled_time: null,
    duration_seconds: null,
    assignee_id: t.assignee_id,
    order_id: null,
    order_index: null,
    position: t.position,
    created_by: null,
    metafields: "{}",
    route_id: null,
    signers: null,
    client_id: null,
    form_default_values: null,
    recurrence_id: null,
    calendar_time: null,
    contact_address_id: null,
    contact_address_external_id: null,
    task_import_id: null,
    version: t.version,
    last_command_id: null,
    created_at: 0,
    updated_at: 0,
  };
}

const command = (
  c: { action: CommandInput["action"]; assigneeId: string | null; taskData: Record<string, unknown> },
  i: number,
): CommandInput => ({
  id: `cmd-${i}`,
  externalId: `ext-${i}`,
  taskId: "task",
  action: c.action,
  time: 0,
  assigneeId: c.assigneeId,
  taskData: c.taskData,
  notes: "",
  location: null,
});

describe("planRun", () => {
  it("chains each command on the task the previous one leaves, as the state machine decides", () => {
    fc.assert(
      fc.property(
        taskArb,
        fc.array(commandArb, { minLength: 1, maxLength: 12 }),
        actorArb,
        fc.nat({ max: 3 }),
        fc.integer({ min: 1, max: 12 }),
        (t, cs, actor, from, max) => {
          const commands = cs.map(command);
          const start = row(t);
          let tick = 1_000;
          const run = planRun(
            actor as Actor,
            start,
            commands,
            Math.min(from, commands.length),
            max,
            () => tick++,
          );
          expect(run.length).toBeLessThanOrEqual(max);
          let task = start;
          run.forEach((e, i) => {
            expect(e.cmd).toBe(commands[Math.min(from, commands.length) + i]);
            expect(e.before).toEqual(task);
            const decision = decide(decisionInput(actor as Actor, task, e.cmd));
            if (!decision.ok) {
              expect(e.error).toBe(decision.error);
              expect(e.after).toEqual(task);
              expect(e.changes).toEqual({});
            } else {
              // A move that takes a transit/active slot is never part of a run (its limit is
              // checked command by command, against D1).
              expect(decision.usesTransitSlot && decision.assigneeId).toBeFalsy();
              expect(e.error).toBeUndefined();
              expect(e.after.state).toBe(decision.state);
              expect(e.after.assignee_id).toBe(decision.assigneeId);
              expect(e.after.version).toBe(task.version + 1);
            }
            task = e.after;
          });
        },
      ),
      { numRuns: 500, seed: 1155 },
    );
  });

  it("is deterministic for the same input and clock", () => {
    fc.assert(
      fc.property(taskArb, fc.array(commandArb, { minLength: 1, maxLength: 8 }), actorArb, (t, cs, actor) => {
        const commands = cs.map(command);
        const a = planRun(actor as Actor, row(t), commands, 0, 50, () => 5);
        const b = planRun(actor as Actor, row(t), commands, 0, 50, () => 5);
        expect(a).toEqual(b);
      }),
      { numRuns: 200, seed: 77 },
    );
  });
});
