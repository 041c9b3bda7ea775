import { computed } from "@preact/signals";
import { lang } from "../shared/i18n";
import { en, FIELD_CATALOGS, type FieldKey } from "./strings";

export type { FieldKey };

const catalog = computed(() => FIELD_CATALOGS[lang.value] ?? en);

/** A field app message in the chosen language, `{name}` placeholders filled in. */
export function tf(key: FieldKey, params: Record<string, string | number> = {}): string {
  const text = catalog.value[key] ?? en[key];
  return text.replace(/\{(\w+)\}/g, (_, k) => String(params[k] ?? `{${k}}`));
}
