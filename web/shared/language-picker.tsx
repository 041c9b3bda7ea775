import { LANGUAGE_NAMES, LANGUAGES, type Language, lang } from "./i18n";

/** The language menu of both apps: the twelve languages, each named in itself. */
export function LanguagePicker({ label }: { label: string }) {
  return (
    <label class="lang">
      {label}{" "}
      <select value={lang.value} onChange={(e) => (lang.value = e.currentTarget.value as Language)}>
        {LANGUAGES.map((l) => (
          <option key={l} value={l} lang={l}>
            {LANGUAGE_NAMES[l]}
          </option>
        ))}
      </select>
    </label>
  );
}
