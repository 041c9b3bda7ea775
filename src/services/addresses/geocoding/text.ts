// Text folding for gazetteer look-ups: case, accents and punctuation do not matter, so
// "ZÜRICH", "Zurich" and "zürich" are the same key "zurich", and "Saint-Denis" is "saint denis".
// scripts/build-gazetteer.mjs has a copy of this folding to precompute the stored keys; a test
// checks that both agree on every place name.

export type Token = {
  /** Folded form: lower case, no accents, letters and digits only. */
  norm: string;
  /** Offsets of the original word in the input (a word may fold into several tokens). */
  start: number;
  end: number;
  hasDigit: boolean;
};

const FOLD_SPECIAL: Record<string, string> = {
  ß: "ss",
  ø: "o",
  æ: "ae",
  œ: "oe",
  ł: "l",
  đ: "d",
  ð: "d",
  þ: "th",
  ı: "i",
  ħ: "h",
};
const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const NOT_ALNUM = /[^\p{L}\p{N}]+/u;
const DIGIT = /\p{N}/u;

function foldWord(word: string): string {
  return word
    .toLowerCase()
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .replace(/[ßøæœłđðþıħ]/g, (c) => FOLD_SPECIAL[c]);
}

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  for (const m of text.matchAll(WORD)) {
    const start = m.index;
    const end = start + m[0].length;
    for (const norm of foldWord(m[0]).split(NOT_ALNUM)) {
      if (norm) tokens.push({ norm, start, end, hasDigit: DIGIT.test(norm) });
    }
  }
  return tokens;
}

/** The look-up key of a name: its folded tokens joined by single spaces. */
export function foldKey(text: string): string {
  return tokenize(text)
    .map((t) => t.norm)
    .join(" ");
}
