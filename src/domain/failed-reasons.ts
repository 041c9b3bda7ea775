/** Failure reasons (contract §11): a pure rule the task state machine applies to `fail`. */

/**
 * A `fail` command's notes must be one of the account's `failed_reasons`, or start with
 * `"<reason>: "` (a reason with details); with no reasons configured, any notes do. Null when
 * they are acceptable, else the rejection's message listing the reasons.
 */
export function failedReasonError(reasons: readonly string[], notes: string): string | null {
  if (!reasons.length) return null;
  if (reasons.some((r) => notes === r || notes.startsWith(`${r}: `))) return null;
  return `The notes of a failed task must be one of the account's failed reasons: ${reasons.map((r) => `"${r}"`).join(", ")}.`;
}
