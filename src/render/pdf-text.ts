/**
 * PDF's standard 14 fonts encode WinAnsi (Windows-1252) only: Latin-1 and a few more. Other
 * characters are written as "?" rather than failing the whole document.
 */
export const winAnsi = (s: string) =>
  s.replace(/[^\u0020-\u007e\u00a0-\u00ff€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ]/g, "?");
