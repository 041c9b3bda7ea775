import { selectIn } from "../../db/in-list";
import type { CommandRow } from "./types";

/** Stored commands of an account by their idempotency keys (chunked under D1's parameter limit). */
export function storedCommands(env: Env, accountId: string, externalIds: string[]) {
  return selectIn<CommandRow>(
    env.DB,
    "SELECT * FROM task_commands WHERE account_id = ? AND external_id IN (IN_LIST)",
    [accountId],
    externalIds,
  );
}
