/**
 * Account configuration (contract §11): the values a setting may take, and what the services
 * that use a setting read of it.
 */

/** The 12 locales of public pages and messages (contract §17); `language` is one of them. */
export const LOCALES = ["de", "en", "es", "et", "fi", "fr", "it", "lt", "lv", "pl", "ru", "sv"] as const;
export type Locale = (typeof LOCALES)[number];

export const MAP_PROVIDERS = ["osm", "google"] as const;
