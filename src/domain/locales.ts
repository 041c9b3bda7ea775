/** The 12 locales of public pages and messages (contract §11, §17). */
export const LOCALES = ["de", "en", "es", "et", "fi", "fr", "it", "lt", "lv", "pl", "ru", "sv"] as const;
export type Locale = (typeof LOCALES)[number];
export const isLocale = (s: string): s is Locale => (LOCALES as readonly string[]).includes(s);
