import type { RoleName, TokenKind } from "../../db/schema";

/** Who is calling, in which account, with which role: resolved once per request. */
export type Principal = {
  userId: string;
  email: string;
  accountId: string;
  role: RoleName;
  tokenId: string;
  tokenKind: TokenKind;
  account: { apiVersion: string; featureAllowWorkerReordering: boolean; transitActiveLimit: number | null };
};

export const isDispatcher = (p: Principal) =>
  p.role === "admin" || p.role === "manager" || p.role === "integration";
