/**
 * What a public tracker may show (contract §17), pure: the allowlist of task fields, the
 * popup template's `{{field}}` placeholders (only allowlisted fields, HTML-escaped), and the
 * language of `Accept-Language` (RFC 9110 §12.5.4: q-values, then the primary subtag).
 */

/** Task fields a tracker may publish (dotted: a member of an object field). */
export const PUBLIC_TASK_FIELDS = [
  "state",
  "category",
  "description",
  "reference",
  "address.formatted_address",
  "address.raw_address",
  "address.location",
  "complete_after",
  "complete_before",
  "scheduled_time",
  "eta",
  "assignee.name",
  "contact.name",
] as const;
export type PublicTaskField = (typeof PUBLIC_TASK_FIELDS)[number];

/** The default allowlist (contract §17): `reference` only when listed. */
export const DEFAULT_PUBLIC_TASK_FIELDS: PublicTaskField[] = [
  "state",
  "category",
  "address.formatted_address",
  "complete_after",
  "complete_before",
  "scheduled_time",
  "eta",
  "assignee.name",
];

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** Placeholders of a template that name no field of `allowed` (the 400 of §17 names them). */
export function badPlaceholders(template: string, allowed: readonly string[]): string[] {
  const bad = new Set<string>();
  for (const m of template.matchAll(PLACEHOLDER)) if (!allowed.includes(m[1])) bad.add(m[1]);
  return [...bad];
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/**
 * Renders a popup template: the template's own text and each value are HTML-escaped (a
 * template or a value with markup shows as text); a field without a value, or outside the
 * allowlist, renders empty. `html: false` renders plain text (messages) unescaped.
 */
export function renderTemplate(
  template: string,
  values: Record<string, unknown>,
  allowed: readonly string[],
  opts: { html?: boolean } = {},
): string {
  // Plain text (an SMS, a text/plain e-mail) is shown as written: escaping would show `&amp;`.
  const escapeText = opts.html === false ? (s: string) => s : escapeHtml;
  let out = "";
  let last = 0;
  for (const m of template.matchAll(PLACEHOLDER)) {
    out += escapeText(template.slice(last, m.index));
    const v = allowed.includes(m[1]) ? values[m[1]] : undefined;
    out +=
      v === null || v === undefined ? "" : escapeText(typeof v === "object" ? JSON.stringify(v) : String(v));
    last = m.index! + m[0].length;
  }
  return out + escapeText(template.slice(last));
}

/**
 * The best of `supported` for an `Accept-Language` header: by q-value (then order), an exact
 * tag or its primary subtag (`fi-FI` → `fi`); `fallback` when nothing matches.
 */
export function negotiateLanguage<T extends string>(
  header: string | null | undefined,
  supported: readonly T[],
  fallback: T,
): T {
  if (!header) return fallback;
  const ranges = header
    .split(",")
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p)).find(Boolean);
      return { tag: tag.trim().toLowerCase(), q: q ? Number(q[1]) : 1, i };
    })
    .filter((r) => r.tag && r.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const r of ranges) {
    if (r.tag === "*") return fallback;
    const exact = supported.find((s) => s === r.tag);
    if (exact) return exact;
    const primary = supported.find((s) => s === r.tag.split("-")[0]);
    if (primary) return primary;
  }
  return fallback;
}

/** The field names a template's placeholders name, once each. */
export function placeholdersOf(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]))];
}
