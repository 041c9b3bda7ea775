import type { RoleName, TokenKind } from "../db/schema";

/**
 * Who is calling, in which account, with which role: resolved once per request from the
 * token (services/auth), then read by every layer. Plain data, so the HTTP context, the
 * services and the rules can all name it without depending on one another.
 */
export type Principal = {
  userId: string;
  email: string;
  accountId: string;
  role: RoleName;
  tokenId: string;
  tokenKind: TokenKind;
  account: {
    apiVersion: string;
    featureAllowWorkerReordering: boolean;
    transitActiveLimit: number | null;
    failedReasons: string[];
    featureSignerName: boolean;
  };
  /** For a hijack token (contract §14): the admin acting as this user (RFC 8693 `act`). */
  actorUserId: string | null;
};

/** Admins, managers and integrations act on the whole account; workers on their own tasks. */
export const isDispatcher = (p: Principal) =>
  p.role === "admin" || p.role === "manager" || p.role === "integration";
