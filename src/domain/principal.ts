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
  /** The caller's role is on duty (contract §28): only then are its positions stored. */
  onDuty?: boolean;
  account: {
    apiVersion: string;
    featureAllowWorkerReordering: boolean;
    transitActiveLimit: number | null;
    failedReasons: string[];
    featureSignerName: boolean;
    /** Days positions are kept (contract §28). */
    positionRetentionDays?: number;
    /** `auto_assign` is `insert` (contract §29): writes wake the account's insertion. */
    autoAssign?: boolean;
    /** A live stream was opened on the account lately: writes poke its stream object. */
    live?: boolean;
    /** While the account moves to another database (contract §24): its writes wait until then (epoch ms). */
    movingUntil?: number | null;
  };
  /** For a hijack token (contract §14): the admin acting as this user (RFC 8693 `act`). */
  actorUserId: string | null;
};

/** Admins, managers and integrations act on the whole account; workers on their own tasks. */
export const isDispatcher = (p: Principal) =>
  p.role === "admin" || p.role === "manager" || p.role === "integration";

/**
 * The account acting on its own, for work no request carries (notifications sent from a
 * queue): a dispatcher's view of the account, attributed to `userId` (e.g. the creator of the
 * template being sent), with the account's defaults for everything a command would read.
 */
export const accountPrincipal = (accountId: string, userId: string | null): Principal => ({
  userId: userId ?? "",
  email: "",
  accountId,
  role: "admin",
  tokenId: "",
  tokenKind: "session",
  account: {
    apiVersion: "",
    featureAllowWorkerReordering: false,
    transitActiveLimit: null,
    failedReasons: [],
    featureSignerName: false,
  },
  actorUserId: null,
});
