import { selectIn } from "../../db/in-list";
import { uuidBytes } from "../../db/uuid-bytes";
import { COMMAND_SELECT } from "./apply/statements";
import type { CommandRow } from "./types";

/** Stored commands of an account by their idempotency keys (chunked under D1's parameter limit). */
export function storedCommands(env: Env, accountId: string, externalIds: string[]) {
  return selectIn<CommandRow>(
    env.DB,
    `${COMMAND_SELECT} WHERE account_id = ${uuidBytes()} AND external_id IN (IN_LIST)`,
    [accountId],
    externalIds,
  );
}
