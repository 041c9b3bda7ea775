import type { PluralForms } from "../plural";

/**
 * The console's counts in the twelve languages, one form per CLDR plural category the language
 * has (web/shared/plural.ts): Lithuanian, Polish and Russian have `one`, `few`, `many` and
 * `other`; Latvian `zero`, `one` and `other`; French `one` (0 and 1), `many` and `other`.
 * test/web/plural.test.ts checks each language's forms for the numbers that pick them.
 */
export type PluralKey = "tasks.count" | "late.count";

export const PLURALS: Record<string, Record<PluralKey, PluralForms>> = {
  en: {
    "tasks.count": { one: "{n} task", other: "{n} tasks" },
    "late.count": { other: "{n} late" },
  },
  de: {
    "tasks.count": { one: "{n} Auftrag", other: "{n} Aufträge" },
    "late.count": { other: "{n} verspätet" },
  },
  es: {
    "tasks.count": { one: "{n} tarea", many: "{n} de tareas", other: "{n} tareas" },
    "late.count": { one: "{n} con retraso", other: "{n} con retraso" },
  },
  et: {
    "tasks.count": { one: "{n} ülesanne", other: "{n} ülesannet" },
    "late.count": { other: "Hilineb: {n}" },
  },
  fi: {
    "tasks.count": { one: "{n} tehtävä", other: "{n} tehtävää" },
    "late.count": { other: "{n} myöhässä" },
  },
  fr: {
    "tasks.count": { one: "{n} tâche", many: "{n} de tâches", other: "{n} tâches" },
    "late.count": { one: "{n} en retard", many: "{n} de tâches en retard", other: "{n} en retard" },
  },
  it: {
    "tasks.count": { one: "{n} attività", many: "{n} di attività", other: "{n} attività" },
    "late.count": { other: "{n} in ritardo" },
  },
  lt: {
    "tasks.count": {
      one: "{n} užduotis",
      few: "{n} užduotys",
      many: "{n} užduoties",
      other: "{n} užduočių",
    },
    "late.count": { one: "{n} vėluoja", few: "{n} vėluoja", many: "{n} vėluoja", other: "{n} vėluoja" },
  },
  lv: {
    "tasks.count": { zero: "{n} uzdevumu", one: "{n} uzdevums", other: "{n} uzdevumi" },
    "late.count": { zero: "{n} kavējas", one: "{n} kavējas", other: "{n} kavējas" },
  },
  pl: {
    "tasks.count": { one: "{n} zadanie", few: "{n} zadania", many: "{n} zadań", other: "{n} zadania" },
    "late.count": {
      one: "{n} spóźnione",
      few: "{n} spóźnione",
      many: "{n} spóźnionych",
      other: "{n} spóźnionego",
    },
  },
  ru: {
    "tasks.count": { one: "{n} задача", few: "{n} задачи", many: "{n} задач", other: "{n} задачи" },
    "late.count": {
      one: "{n} опаздывает",
      few: "{n} опаздывают",
      many: "{n} опаздывают",
      other: "{n} опаздывают",
    },
  },
  sv: {
    "tasks.count": { one: "{n} uppdrag", other: "{n} uppdrag" },
    "late.count": { one: "{n} försenat", other: "{n} försenade" },
  },
};
