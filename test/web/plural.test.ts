import { describe, expect, it } from "vitest";
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
