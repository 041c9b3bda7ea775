/**
 * CSV as RFC 4180 says, streaming both ways, with no I/O: the export writes rows one by one,
 * the import feeds text as it arrives and takes whole records out.
 *
 * Writing: UTF-8, CRLF after every record (the header too), a field quoted when it holds a
 * comma, a double quote, CR or LF, its quotes doubled (RFC 4180 §2.5–2.7).
 *
 * Formula injection (contract §21): a spreadsheet runs a cell that starts with `=`, `+`, `-`,
 * `@`, tab or carriage return as a formula (OWASP "CSV Injection"), so such a cell is written
 * with a leading `'`; so is one whose trigger follows leading blanks or is a look-alike
 * (`TRIGGER` below). That includes negative numbers: `-5` is written `'-5` (a spreadsheet shows
 * it as the text -5). So that the escape is reversible, a cell that already starts with one or
 * more `'` followed by one of those characters gets one more `'`; reading removes exactly one
 * `'` from a cell of the form `'+<trigger>...`. Round trip: `unescapeFormula(escapeFormula(s)) === s`
 * for every string.
 *
 * Reading: a leading UTF-8 BOM is dropped; CRLF and bare LF both end a record; quoted fields may
 * hold commas, quotes (doubled) and line breaks. Empty lines are records of one empty field:
 * the caller skips them but still counts them, as a spreadsheet numbers its rows.
 */

/**
 * A trigger, as spreadsheets read one: `= + - @`, tab or CR, also after leading spaces, tabs,
 * no-break or zero-width characters (which spreadsheets skip), and the full-width and small-form
 * look-alikes that some of them fold to the ASCII ones (＝ ＋ － ＠, ﹦ ﹢ ﹣ ﹫, and the minus sign −).
 */
const TRIGGER =
  /^'*[ \t\u00a0\u2007\u202f\u200b-\u200d\u2060\ufeff]*[=+\-@\t\r\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\ufe6b\u2212]/;
/** A leading U+FEFF is quoted too, so that it is never taken for a byte order mark. */
const NEEDS_QUOTES = /^\uFEFF|[",\r\n]/;

export function escapeFormula(cell: string): string {
  return TRIGGER.test(cell) ? `'${cell}` : cell;
}

export function unescapeFormula(cell: string): string {
  return cell.startsWith("'") && TRIGGER.test(cell.slice(1)) ? cell.slice(1) : cell;
}

/** One field as written: formula-escaped, then quoted when RFC 4180 needs it. */
export function csvField(cell: string): string {
  const v = escapeFormula(cell);
  return NEEDS_QUOTES.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}

/** One record with its CRLF. */
export function csvRecord(cells: readonly string[]): string {
  return `${cells.map(csvField).join(",")}\r\n`;
}

export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    /** The record (1-based, the header is 1) where the error is. */
    readonly record: number,
  ) {
    super(message);
  }
}

/**
 * An incremental RFC 4180 reader. `push(text)` returns the records completed by that text;
 * `end()` returns the last one (a file need not end with a line break). Fields come out with
 * their quotes removed and formula escapes undone.
 */
export class CsvReader {
  private field = "";
  private record: string[] = [];
  private quoted = false;
  /** Inside quotes (a `"` seen there may be the closing one or the first of a pair). */
  private inQuotes = false;
  private quoteSeen = false;
  private afterCr = false;
  private started = false;
  /** Records completed so far (the next one's number is this + 1). */
  count = 0;

  push(text: string): string[][] {
    const out: string[][] = [];
    let i = 0;
    if (!this.started && text.length) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) i = 1; // the BOM some spreadsheets write first
    }
    let plainStart = -1;
    const flushPlain = (end: number) => {
      if (plainStart >= 0) {
        this.field += text.slice(plainStart, end);
        plainStart = -1;
      }
    };
    for (; i < text.length; i++) {
      const ch = text[i];
      if (this.afterCr) {
        this.afterCr = false;
        if (ch === "\n") continue; // CRLF: the CR already ended the record
      }
      if (this.inQuotes) {
        if (this.quoteSeen) {
          this.quoteSeen = false;
          if (ch === '"') {
            this.field += '"';
            continue;
          }
          this.inQuotes = false; // that quote closed the field; fall through to read `ch`
        } else if (ch === '"') {
          flushPlain(i);
          this.quoteSeen = true;
          continue;
        } else {
          if (plainStart < 0) plainStart = i;
          continue;
        }
      }
      if (ch === ",") {
        flushPlain(i);
        this.endField();
      } else if (ch === "\r" || ch === "\n") {
        flushPlain(i);
        this.endField();
        out.push(this.endRecord());
        if (ch === "\r") this.afterCr = true;
      } else if (ch === '"') {
        flushPlain(i);
        if (this.field === "" && !this.quoted) {
          this.quoted = true;
          this.inQuotes = true;
        } else {
          throw new CsvSyntaxError(
            this.quoted
              ? "Unexpected character after a closing quote."
              : "A double quote inside an unquoted field (RFC 4180: quote the field and double the quote).",
            this.count + 1,
          );
        }
      } else {
        if (this.quoted) {
          throw new CsvSyntaxError("Unexpected character after a closing quote.", this.count + 1);
        }
        if (plainStart < 0) plainStart = i;
      }
    }
    flushPlain(text.length);
    return out;
  }

  end(): string[][] {
    if (this.inQuotes && !this.quoteSeen) {
      throw new CsvSyntaxError("The file ends inside a quoted field.", this.count + 1);
    }
    this.inQuotes = false;
    this.quoteSeen = false;
    if (this.field === "" && this.record.length === 0 && !this.quoted) return [];
    this.endField();
    return [this.endRecord()];
  }

  private endField() {
    this.record.push(unescapeFormula(this.field));
    this.field = "";
    this.quoted = false;
  }

  private endRecord(): string[] {
    const r = this.record;
    this.record = [];
    this.count++;
    return r;
  }
}

/** Whether a record is an empty line (one empty field). */
export const isBlankRecord = (r: readonly string[]) => r.length === 1 && r[0] === "";

/** Parses a whole text (tests, headers). */
export function parseCsv(text: string): string[][] {
  const r = new CsvReader();
  return [...r.push(text), ...r.end()];
}
