/**
 * The settle delay (contract §4, `UPDATED_AT_SETTLE_SECONDS`): lists that clients sync from by time or id leave out rows
 * younger than this, so a row committed late by a slower writer is never skipped.
 */
export function settleSeconds(env: { UPDATED_AT_SETTLE_SECONDS?: string }): number {
  const n = Number(env.UPDATED_AT_SETTLE_SECONDS);
  return Number.isFinite(n) && n >= 0 ? n : 5;
}
