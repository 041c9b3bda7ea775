/**
 * Account configuration (contract §11): the values a setting may take, and what the services
 * that use a setting read of it.
 */

export { LOCALES, type Locale } from "../../domain/locales";

export const MAP_PROVIDERS = ["osm", "google"] as const;
