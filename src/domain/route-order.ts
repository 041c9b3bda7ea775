/**
 * A worker's or a route's order of tasks (contract §16): by `position`, those without one last,
 * then by creation, then by id (a total order, so every reader sees the same sequence).
 */
export type Ordered = { id: string; position: number | null; created_at: number };

export const byPosition = (a: Ordered, b: Ordered): number =>
  Number(a.position === null) - Number(b.position === null) ||
  (a.position ?? 0) - (b.position ?? 0) ||
  a.created_at - b.created_at ||
  (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
