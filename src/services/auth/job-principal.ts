import type { RoleName } from "../../db/schema";
import type { Principal } from "./principal";

/**
 * The user who started a job (an export, an import, a route optimization), acting again from
 * its queue consumer: the job sees what that user may see and writes what that user may write,
 * through the same services as the API. A user who lost their role in the meantime stops the
 * job (it fails with the reason).
 */
export async function jobPrincipal(
  db: D1Database,
  accountId: string,
  userId: string | null,
): Promise<Principal> {
  const r = userId
    ? await db
        .prepare(
          `SELECT ro.role, u.email, a.api_version, a.feature_allow_worker_reordering, a.transit_active_limit, a.failed_reasons, a.feature_signer_name
           FROM account_roles ro JOIN users u ON u.id = ro.user_id JOIN accounts a ON a.id = ro.account_id
           WHERE ro.account_id = ? AND ro.user_id = ? AND ro.state = 'active' AND ro.is_active = 1 AND u.is_active = 1`,
        )
        .bind(accountId, userId)
        .first<{
          role: RoleName;
          email: string;
          api_version: string;
          feature_allow_worker_reordering: number;
          transit_active_limit: number | null;
          failed_reasons: string;
          feature_signer_name: number;
        }>()
    : null;
  if (!r || !userId) throw new JobError("The user who started this job no longer has a role in the account.");
  return {
    userId,
    email: r.email,
    accountId,
    role: r.role,
    tokenId: "",
    tokenKind: "session",
    account: {
      apiVersion: r.api_version,
      featureAllowWorkerReordering: Boolean(r.feature_allow_worker_reordering),
      transitActiveLimit: r.transit_active_limit,
      failedReasons: JSON.parse(r.failed_reasons || "[]"),
      featureSignerName: Boolean(r.feature_signer_name),
    },
    actorUserId: null,
  };
}

/** A reason a job cannot go on that a retry would not mend: the job is failed with it. */
export class JobError extends Error {}
