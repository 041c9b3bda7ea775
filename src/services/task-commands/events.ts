import { eventStatement } from "../events/outbox";
import type { ApplyHooks } from "./apply";
import type { Actor } from "./types";

/**
 * Outbox rows for a command's outcome, guarded like the command row itself so that only the
 * events of what really happened are written (same batch, same condition).
 */
export function commandEvents(env: Env, actor: Actor, baseUrl: string): NonNullable<ApplyHooks["events"]> {
  return ({ cmd, outcome, before, after, error, guard }) => {
    const stmts: D1PreparedStatement[] = [];
    const data = {
      task_command: {
        id: cmd.id,
        url: `${baseUrl}/task_commands/${cmd.id}/`,
        external_id: cmd.externalId,
        action: cmd.action,
        state: outcome,
        error_message: error,
      },
      task: `${baseUrl}/tasks/${cmd.taskId}/`,
      task_state_before: before.state,
      task_state_after: after?.state ?? before.state,
    };
    const when = guard
      ? {
          sql: `${guard.expectApplied ? "" : "NOT "}EXISTS (SELECT 1 FROM tasks WHERE id = ? AND version = ?)`,
          params: [guard.taskId, guard.version],
        }
      : undefined;
    stmts.push(
      eventStatement(env.DB, {
        accountId: actor.accountId,
        type: `task_command.${outcome}`,
        objectId: cmd.id,
        data,
        when,
      }),
    );
    if (outcome === "accepted" && after && after.state !== before.state) {
      stmts.push(
        eventStatement(env.DB, {
          accountId: actor.accountId,
          type: "task.state_changed",
          objectId: cmd.taskId,
          data,
          when,
        }),
      );
    }
    return stmts;
  };
}
