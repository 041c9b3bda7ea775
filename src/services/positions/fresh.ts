/**
 * `POSITION_FRESH_MINUTES` (default 15): a worker's latest position younger than this is where a
 * re-plan from now, and auto-assign, start its route (contract §29); an older one says little of
 * where it is now.
 */
export function positionFreshMs(env: Env): number {
  const raw = (env as unknown as Record<string, string | undefined>).POSITION_FRESH_MINUTES;
  const n = Number(raw);
  return raw !== undefined && raw !== "" && Number.isFinite(n) && n >= 0 ? n * 60_000 : 15 * 60_000;
}
