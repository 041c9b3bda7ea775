import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ETA_REASONS, PREDICTED_DELIVERY_ERRORS } from "../../src/domain/eta-messages";
import { LOCALES } from "../../src/domain/locales";
import { badPlaceholders, negotiateLanguage, renderTemplate } from "../../src/domain/tracker";

describe("tracker rules (contract §17)", () => {
  it("negotiates Accept-Language by q-value, then primary subtag, else the fallback", () => {
    expect(negotiateLanguage("fi-FI", LOCALES, "en")).toBe("fi");
    expect(negotiateLanguage("en;q=0.5, de;q=0.9", LOCALES, "fi")).toBe("de");
    expect(negotiateLanguage("pt-BR, sv;q=0.1", LOCALES, "en")).toBe("sv");
    expect(negotiateLanguage("pt-BR", LOCALES, "et")).toBe("et");
    expect(negotiateLanguage("fr;q=0, it", LOCALES, "en")).toBe("it");
    expect(negotiateLanguage(undefined, LOCALES, "lv")).toBe("lv");
    expect(negotiateLanguage("*", LOCALES, "lt")).toBe("lt");
  });

  it("has a sentence for every reason in every locale", () => {
    for (const l of LOCALES)
      for (const r of ETA_REASONS)
        expect(PREDICTED_DELIVERY_ERRORS[l][r].length, `${l} ${r}`).toBeGreaterThan(10);
  });

  it("names placeholders outside the allowlist; renders values escaped, unknown ones empty", () => {
    expect(badPlaceholders("{{state}} {{ contact.notes }} {{x}}", ["state"])).toEqual(["contact.notes", "x"]);
    expect(renderTemplate("<i>{{state}}</i>{{x}}", { state: "<b>&</b>", x: "hidden" }, ["state"])).toBe(
      "&lt;i&gt;&lt;b&gt;&amp;&lt;/b&gt;&lt;/i&gt;",
    );
    fc.assert(
      fc.property(fc.string(), fc.string(), (template, value) => {
        const out = renderTemplate(template, { state: value }, ["state"]);
        expect(out).not.toMatch(/<|>/);
      }),
    );
  });
});
