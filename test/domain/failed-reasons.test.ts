import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { failedReasonError } from "../../src/domain/failed-reasons";
import { decide } from "../../src/domain/task-state-machine";

describe("failed reasons (contract §11)", () => {
  it("accepts a reason, or a reason followed by ': ' and details; anything else names the reasons", () => {
    const reasons = ["Not at home", "Refused"];
    expect(failedReasonError(reasons, "Not at home")).toBeNull();
    expect(failedReasonError(reasons, "Refused: box damaged")).toBeNull();
    for (const notes of ["", "not at home", "Refused:", "Refusedx", "Lunch"]) {
      expect(failedReasonError(reasons, notes), notes).toBe(
        'The notes of a failed task must be one of the account\'s failed reasons: "Not at home", "Refused".',
      );
    }
  });

  it("without reasons any notes do; the state machine applies it to fail only", () => {
    fc.assert(
      fc.property(fc.string(), (notes) => {
        expect(failedReasonError([], notes)).toBeNull();
        const base = {
          task: { state: "active" as const, assigneeId: "w" },
          actor: { userId: "w", role: "worker" as const },
          account: { allowWorkerReordering: false, failedReasons: ["Refused"] },
          notes,
        };
        const failed = decide({ ...base, action: "fail" });
        expect(failed.ok).toBe(notes === "Refused" || notes.startsWith("Refused: "));
        expect(decide({ ...base, action: "complete" }).ok).toBe(true);
      }),
    );
  });
});
