/**
 * Counts in words (issue 53): "1 task", "2 tasks", and in Polish "1 zadanie", "2 zadania",
 * "5 zadań". Each language's forms follow its CLDR plural categories (Unicode TR35, "Language
 * Plural Rules"), chosen by the browser's own `Intl.PluralRules`: no library, no data shipped
 * (docs/libraries.md says why). A form missing for a category falls back to `other`.
 */
export type PluralForms = Partial<Record<Intl.LDMLPluralRule, string>> & { other: string };

/** The form of `forms` for `n` in `lang`, with `{n}` written as that language writes numbers. */
export function plural(lang: string, forms: PluralForms, n: number): string {
  const category = new Intl.PluralRules(lang).select(n);
  return (forms[category] ?? forms.other).replace("{n}", new Intl.NumberFormat(lang).format(n));
}
