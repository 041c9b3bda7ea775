import { describe, expect, it } from "vitest";
import { en } from "../../web/shared/locales/en";
import { others } from "../../web/shared/locales/others";

// Every string of the console in every one of the twelve languages (contract Part four, §17's
// list), with the same placeholders.
const LANGUAGES = ["de", "en", "es", "et", "fi", "fr", "it", "lt", "lv", "pl", "ru", "sv"];
const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe("the console's languages", () => {
  it("has the twelve languages, each with every key, none empty, the same placeholders", () => {
    const catalogs: Record<string, Record<string, string>> = { en, ...others };
    expect(Object.keys(catalogs).sort()).toEqual(LANGUAGES);
    for (const [lang, catalog] of Object.entries(catalogs)) {
      expect(Object.keys(catalog).sort(), lang).toEqual(Object.keys(en).sort());
      for (const [key, text] of Object.entries(catalog)) {
        expect(text.trim(), `${lang} ${key}`).not.toBe("");
        expect(placeholders(text), `${lang} ${key}`).toEqual(placeholders(en[key as keyof typeof en]));
      }
    }
  });
});
