import { computed, signal } from "@preact/signals";
import { en, type MessageKey } from "./locales/en";
import { others } from "./locales/others";
import { PLURALS, type PluralKey } from "./locales/plurals";
import { plural } from "./plural";

/** The tracking page's twelve languages (contract §17), the apps' too (contract Part four). */
export const LANGUAGES = ["de", "en", "es", "et", "fi", "fr", "it", "lt", "lv", "pl", "ru", "sv"] as const;
export type Language = (typeof LANGUAGES)[number];

export const CATALOGS: Record<Language, Record<MessageKey, string>> = { en, ...others };

/** Names of the languages in themselves, for the language menu. */
export const LANGUAGE_NAMES: Record<Language, string> = {
  de: "Deutsch",
  en: "English",
  es: "Español",
  et: "Eesti",
  fi: "Suomi",
  fr: "Français",
  it: "Italiano",
  lt: "Lietuvių",
  lv: "Latviešu",
  pl: "Polski",
  ru: "Русский",
  sv: "Svenska",
};

/** `?lang=` first (tests, a link), then the browser's languages, then English. */
export function pickLanguage(query: string | null, preferred: readonly string[]): Language {
  for (const tag of [query, ...preferred]) {
    const base = tag?.toLowerCase().split("-")[0];
    if (base && (LANGUAGES as readonly string[]).includes(base)) return base as Language;
  }
  return "en";
}

export const lang = signal<Language>(
  pickLanguage(new URLSearchParams(location.search).get("lang"), navigator.languages ?? []),
);

const catalog = computed(() => CATALOGS[lang.value]);

/** A message with `{name}` placeholders filled in. */
export function t(key: MessageKey, params: Record<string, string | number> = {}): string {
  const text = catalog.value[key] ?? en[key];
  return text.replace(/\{(\w+)\}/g, (_, k) => String(params[k] ?? `{${k}}`));
}

export type { MessageKey };

/** A count in words, in the language's plural form (web/shared/plural.ts). */
export function tn(key: PluralKey, n: number): string {
  return plural(lang.value, PLURALS[lang.value]?.[key] ?? PLURALS.en[key], n);
}
