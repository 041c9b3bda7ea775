import { describe, expect, it } from "vitest";
import { FIELD_PLURALS, type FieldPluralKey } from "../../web/app/plurals";
import { FIELD_CATALOGS } from "../../web/app/strings";
import { PLURALS } from "../../web/shared/locales/plurals";
import { plural } from "../../web/shared/plural";

// Counts in words (issue 53), one test per language: each language's forms for the numbers that
// pick its CLDR plural categories (0, 1, 2, 5, 11, 21, 22, 25, 1.5), as the browser's
// Intl.PluralRules chooses them.
const tasks = (lang: string, n: number) => plural(lang, PLURALS[lang]["tasks.count"], n);
const NUMBERS = [0, 1, 2, 5, 11, 21, 22, 25];
const EXPECTED: Record<string, string[]> = {
  en: ["0 tasks", "1 task", "2 tasks", "5 tasks", "11 tasks", "21 tasks", "22 tasks", "25 tasks"],
  de: [
    "0 Aufträge",
    "1 Auftrag",
    "2 Aufträge",
    "5 Aufträge",
    "11 Aufträge",
    "21 Aufträge",
    "22 Aufträge",
    "25 Aufträge",
  ],
  es: ["0 tareas", "1 tarea", "2 tareas", "5 tareas", "11 tareas", "21 tareas", "22 tareas", "25 tareas"],
  et: [
    "0 ülesannet",
    "1 ülesanne",
    "2 ülesannet",
    "5 ülesannet",
    "11 ülesannet",
    "21 ülesannet",
    "22 ülesannet",
    "25 ülesannet",
  ],
  fi: [
    "0 tehtävää",
    "1 tehtävä",
    "2 tehtävää",
    "5 tehtävää",
    "11 tehtävää",
    "21 tehtävää",
    "22 tehtävää",
    "25 tehtävää",
  ],
  // French: 0 and 1 are singular.
  fr: ["0 tâche", "1 tâche", "2 tâches", "5 tâches", "11 tâches", "21 tâches", "22 tâches", "25 tâches"],
  it: [
    "0 attività",
    "1 attività",
    "2 attività",
    "5 attività",
    "11 attività",
    "21 attività",
    "22 attività",
    "25 attività",
  ],
  // Lithuanian: 1, 21 (not 11) one; 2-9, 22-29 few; 0, 10-20 other.
  lt: [
    "0 užduočių",
    "1 užduotis",
    "2 užduotys",
    "5 užduotys",
    "11 užduočių",
    "21 užduotis",
    "22 užduotys",
    "25 užduotys",
  ],
  // Latvian: 0, 11, 10-20 zero; 1, 21 one; the rest other.
  lv: [
    "0 uzdevumu",
    "1 uzdevums",
    "2 uzdevumi",
    "5 uzdevumi",
    "11 uzdevumu",
    "21 uzdevums",
    "22 uzdevumi",
    "25 uzdevumi",
  ],
  // Polish: 1 one; 2-4, 22-24 few; 0, 5-21, 25 many.
  pl: ["0 zadań", "1 zadanie", "2 zadania", "5 zadań", "11 zadań", "21 zadań", "22 zadania", "25 zadań"],
  // Russian: 1, 21 one; 2-4, 22-24 few; 0, 5-20, 25 many.
  ru: ["0 задач", "1 задача", "2 задачи", "5 задач", "11 задач", "21 задача", "22 задачи", "25 задач"],
  sv: [
    "0 uppdrag",
    "1 uppdrag",
    "2 uppdrag",
    "5 uppdrag",
    "11 uppdrag",
    "21 uppdrag",
    "22 uppdrag",
    "25 uppdrag",
  ],
};

describe("counts in words (plural rules)", () => {
  for (const [lang, expected] of Object.entries(EXPECTED)) {
    it(`${lang}: the form each number takes`, () => {
      expect(NUMBERS.map((n) => tasks(lang, n))).toEqual(expected);
    });
  }

  it("has forms for the twelve languages, `other` always, and no category the language lacks", () => {
    expect(Object.keys(PLURALS).sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const [lang, keys] of Object.entries(PLURALS)) {
      const categories = new Intl.PluralRules(lang).resolvedOptions().pluralCategories;
      for (const [key, forms] of Object.entries(keys)) {
        expect(forms.other, `${lang} ${key}`).toContain("{n}");
        for (const c of Object.keys(forms)) expect(categories, `${lang} ${key} ${c}`).toContain(c);
      }
    }
  });

  it("Polish and Russian fractions take their own form", () => {
    expect(tasks("pl", 1.5)).toBe("1,5 zadania");
    expect(tasks("ru", 1.5)).toBe("1,5 задачи");
  });
});

describe("the field app's counts in words", () => {
  const field = (lang: string, key: FieldPluralKey, n: number) => {
    const other = (FIELD_CATALOGS[lang] as Record<string, string>)[key];
    return plural(lang, { ...FIELD_PLURALS[lang]?.[key], other }, n).replace("{days}", "7");
  };

  it("every form is a category the language has, with the catalog's placeholders", () => {
    for (const [lang, keys] of Object.entries(FIELD_PLURALS)) {
      const categories = new Intl.PluralRules(lang).resolvedOptions().pluralCategories;
      for (const [key, forms] of Object.entries(keys)) {
        const other = (FIELD_CATALOGS[lang] as Record<string, string>)[key];
        const names = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
        for (const [c, text] of Object.entries(forms ?? {})) {
          expect(categories, `${lang} ${key} ${c}`).toContain(c);
          expect(names(text as string), `${lang} ${key} ${c}`).toEqual(names(other));
        }
      }
    }
  });

  it("says one action, two, five and twenty-one as each language does", () => {
    expect(field("en", "signout.waiting", 1)).toMatch(/^1 action is still waiting/);
    expect(field("en", "signout.waiting", 2)).toMatch(/^2 actions are still waiting/);
    expect(field("pl", "signout.waiting", 1)).toMatch(/^Czeka jeszcze 1 działanie\./);
    expect(field("pl", "signout.waiting", 3)).toMatch(/^Czekają jeszcze 3 działania\./);
    expect(field("pl", "signout.waiting", 5)).toMatch(/^Czeka jeszcze 5 działań\./);
    expect(field("ru", "discarded", 21)).toMatch(/^21 действие, сделанное/);
    expect(field("ru", "discarded", 3)).toMatch(/^3 действия, сделанные/);
    expect(field("ru", "discarded", 5)).toMatch(/^5 действий, сделанных .* за 7 дн\./);
    expect(field("lv", "signout.waiting", 1)).toMatch(/^Vēl gaida 1 darbība\./);
    expect(field("lv", "signout.waiting", 11)).toMatch(/^Vēl gaida 11 darbību\./);
    expect(field("lv", "signout.waiting", 2)).toMatch(/^Vēl gaida 2 darbības\./);
    expect(field("lt", "signout.waiting", 21)).toMatch(/^Dar laukia 21 veiksmas\./);
    expect(field("lt", "signout.waiting", 10)).toMatch(/^Dar laukia 10 veiksmų\./);
    expect(field("es", "status.waiting", 1)).toBe("1 pendiente");
  });
});
