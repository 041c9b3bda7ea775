/** What the comparison reads of a task (pure: no DOM, no client; the unit tests import it). */
type Task = { id?: unknown; state?: unknown };

/**
 * Whether the stops still to do are in another order than before (or others were added): the
 * ones both lists hold, in each list's order, differ; or the new list has open stops the old
 * one lacked. A stop done or gone changes nothing.
 */
export function orderChanged(before: Task[], after: Task[]): boolean {
  const open = (t: Task) => !["completed", "failed", "cancelled"].includes(t.state as string);
  const was = before.filter(open).map((t) => t.id as string);
  const now = after.filter(open).map((t) => t.id as string);
  const had = new Set(was);
  const has = new Set(now);
  if (!before.length) return false;
  if (now.some((id) => !had.has(id))) return true;
  const a = was.filter((id) => has.has(id));
  const b = now.filter((id) => had.has(id));
  return a.some((id, i) => id !== b[i]);
}
