/** An import's cancellation: rows applied so far stay applied (each once); nothing more is. */
import { nonFieldError } from "../../http/errors";
import type { Principal } from "../auth/principal";
import { CANCELLED } from "../jobs/lease";
import { failImport } from "./apply";
import { getImport } from "./index";

export async function cancelImport(env: Env, p: Principal, id: string) {
  const row = await getImport(env.DB, p, id);
  if (row.state !== "queued" && row.state !== "running")
    throw nonFieldError(`This import is already ${row.state}.`);
  await failImport(env, { importId: row.id, baseUrl: "" }, CANCELLED);
  return getImport(env.DB, p, id);
}
