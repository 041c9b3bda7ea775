import { computed } from "@preact/signals";
import { lang } from "../shared/i18n";
import { plural } from "../shared/plural";
import { FIELD_PLURALS, type FieldPluralKey } from "./plurals";
import { en, FIELD_CATALOGS, type FieldKey } from "./strings";

export type { FieldKey };

const catalog = computed(() => FIELD_CATALOGS[lang.value] ?? en);

/**
 * A field app message in the chosen language, `{name}` placeholders filled in; a count `n` picks
 * the language's plural form where it has one (./plurals.ts; the catalog's text is `other`).
 */
export function tf(key: FieldKey, params: Record<string, string | number> = {}): string {
  let text: string = catalog.value[key] ?? en[key];
  const forms = FIELD_PLURALS[lang.value]?.[key as FieldPluralKey];
  if (forms && typeof params.n === "number") text = plural(lang.value, { ...forms, other: text }, params.n);
  return text.replace(/\{(\w+)\}/g, (_, k) => String(params[k] ?? `{${k}}`));
}
