/**
 * JSON Lines (jsonlines.org): one JSON value per line, UTF-8, each line ended by `\n`. JSON
 * escapes line breaks inside strings, so a line is always one record.
 */
export function jsonLine(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

export function parseJsonLines(text: string): unknown[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));
}
