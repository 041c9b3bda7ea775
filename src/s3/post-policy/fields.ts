/** The received form's fields: case-insensitive names, `${filename}`, the size bounds. */
import type { FormField } from "../multipart";
import { entityTooLarge, entityTooSmall } from "../s3-errors";

/** Form fields: the multipart parser's Map, a plain object, or [name, value] pairs. */
export type FormFieldsInput =
  | Map<string, FormField>
  | Record<string, string>
  | Iterable<readonly [string, string]>;

export interface ContentLengthRange {
  min: number;
  max: number;
}

/** Normalize the fields to a Map by lowercased name; repeated names are joined with ",". */
export function normalizeFields(input: FormFieldsInput): Map<string, FormField> {
  const out = new Map<string, FormField>();
  const add = (name: string, value: string) => {
    const key = name.toLowerCase();
    const prev = out.get(key);
    if (prev) prev.value = `${prev.value},${value}`;
    else out.set(key, { name, value });
  };
  if (input instanceof Map) {
    for (const f of input.values()) add(f.name, f.value);
  } else if (typeof (input as Iterable<unknown>)[Symbol.iterator] === "function") {
    for (const [name, value] of input as Iterable<readonly [string, string]>) add(name, value);
  } else {
    for (const [name, value] of Object.entries(input as Record<string, string>)) add(name, value);
  }
  return out;
}

/**
 * The file name `${filename}` stands for: "If the browser or client provides a full or
 * partial path to the file, only the text following the last slash (/) or backslash (\) is
 * used" (S3 "Creating an HTML Form", key field).
 */
export function filenameBase(filename: string): string {
  const i = Math.max(filename.lastIndexOf("/"), filename.lastIndexOf("\\"));
  return filename.slice(i + 1);
}

// biome-ignore lint/suspicious/noTemplateCurlyInString: S3's literal `${filename}` form variable.
export const FILENAME_VARIABLE = "${filename}";

/** Replace every `${filename}` in a field value ("recognized by all form fields"). */
export function expandFilename(value: string, filename: string | null | undefined): string {
  if (filename === null || filename === undefined) return value;
  return value.split(FILENAME_VARIABLE).join(filenameBase(filename));
}

/** Throw S3's EntityTooLarge / EntityTooSmall when `size` is outside `range` (inclusive). */
export function checkContentLength(range: ContentLengthRange | null, size: number): void {
  if (!range) return;
  if (size > range.max) throw entityTooLarge(size, range.max);
  if (size < range.min) throw entityTooSmall(size, range.min);
}
