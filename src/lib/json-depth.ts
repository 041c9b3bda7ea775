/**
 * Deepest nesting a JSON text may have here (request bodies, and import cells read as JSON).
 * RFC 8259 §9 lets a parser limit it; every body of this API is a few levels deep, free-form
 * fields included, and each later step (the body checks, zod, serializing for D1) recurses per
 * level: a body 4,000 levels deep would exhaust the stack.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether `text` nests arrays and objects deeper than `max`, by one pass over it (strings skipped). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c)
        i++; // a backslash escapes the next character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b || ch === 0x7b) {
      if (++depth > max) return true;
    } else if (ch === 0x5d || ch === 0x7d) depth--;
  }
  return false;
}
