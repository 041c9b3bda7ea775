import { notFound } from "../../../http/errors";
import { paginateByCreation } from "../../../http/pagination";
import type { Principal } from "../../auth/principal";
import { isLocalEmail } from ".";

export type OutboxRow = {
  id: string;
  account_id: string | null;
  kind: string;
  to_address: string;
  subject: string;
  text: string;
  /** JSON list of `{file_name, content_type, size, key}` (local.ts). */
  attachments: string;
  created_at: number;
};

/**
 * Messages the local provider kept for the caller's account, oldest first. Outside local mode
 * nothing is kept and the outbox does not exist (404), so a deployment never exposes mail.
 */
export function listOutbox(env: Env, p: Principal, q: { cursor?: string; page_size?: number }, url: string) {
  if (!isLocalEmail(env)) throw notFound();
  return paginateByCreation<OutboxRow>({
    db: env.DB,
    select: "SELECT * FROM outbound_emails",
    where: ["account_id = ?"],
    params: [p.accountId],
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}
