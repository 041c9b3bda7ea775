import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CsvReader,
  CsvSyntaxError,
  csvRecord,
  escapeFormula,
  parseCsv,
  unescapeFormula,
} from "../../src/formats/csv";
import { jsonLine, parseJsonLines } from "../../src/formats/jsonl";

describe("CSV (RFC 4180, contract §21)", () => {
  it("writes CRLF records, quotes what needs it and doubles quotes", () => {
    expect(csvRecord(["a", "b,c", 'say "hi"', "two\nlines", ""])).toBe(
      'a,"b,c","say ""hi""","two\nlines",\r\n',
    );
  });

  it("prefixes formula triggers with ' (negative numbers too) and reads them back", () => {
    for (const [v, w] of [
      ["=SUM(A1)", "'=SUM(A1)"],
      ["+1", "'+1"],
      ["-5", "'-5"],
      ["@x", "'@x"],
      ["\tx", "'\tx"],
      ["'=x", "''=x"],
      ["'abc", "'abc"],
      ["a=b", "a=b"],
      // Look-alikes and leading blanks that spreadsheets skip (contract §21).
      ["＝SUM(A1)", "'＝SUM(A1)"],
      ["＋1", "'＋1"],
      ["－1", "'－1"],
      ["＠x", "'＠x"],
      [" =x", "' =x"],
      ["\t=x", "'\t=x"],
      ["\u00a0=x", "'\u00a0=x"],
      ["\u200b=x", "'\u200b=x"],
      ["\u200b\u00a0 +x", "'\u200b\u00a0 +x"],
      ["' =x", "'' =x"],
      ["  plain", "  plain"],
      ["x＝y", "x＝y"],
    ]) {
      expect(escapeFormula(v)).toBe(w);
      expect(unescapeFormula(w)).toBe(v);
    }
    expect(csvRecord(["\rx"])).toBe('"\'\rx"\r\n');
  });

  it("reads a BOM, CRLF, LF, quoted newlines, and records split anywhere", () => {
    const text = '\uFEFFa,b\r\n"1\r\n2","x""y"\n3,\r\n';
    expect(parseCsv(text)).toEqual([
      ["a", "b"],
      ["1\r\n2", 'x"y'],
      ["3", ""],
    ]);
    for (let cut = 0; cut <= text.length; cut++) {
      const r = new CsvReader();
      expect([...r.push(text.slice(0, cut)), ...r.push(text.slice(cut)), ...r.end()]).toEqual(parseCsv(text));
    }
  });

  it("refuses a quote inside an unquoted field and an unterminated quote, naming the record", () => {
    expect(() => parseCsv('a\r\nb"c\r\n')).toThrow(CsvSyntaxError);
    try {
      parseCsv('a\r\n"open\r\n');
    } catch (e) {
      expect((e as CsvSyntaxError).record).toBe(2);
    }
  });

  it("parse(stringify(rows)) == rows (property)", () => {
    const cell = fc.oneof(
      fc.string({
        unit: fc.constantFrom("a", ",", '"', "\n", "\r", "=", "-", "+", "@", "\t", "'", "é", " ", "\uFEFF"),
      }),
      fc.string(),
    );
    const rows = fc.array(fc.array(cell, { minLength: 2, maxLength: 5 }), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(rows, fc.boolean(), fc.nat(), (rs, bom, cutAt) => {
        const text = (bom ? "\uFEFF" : "") + rs.map(csvRecord).join("");
        const cut = text.length ? cutAt % text.length : 0;
        const r = new CsvReader();
        const got = [...r.push(text.slice(0, cut)), ...r.push(text.slice(cut)), ...r.end()];
        expect(got).toEqual(rs);
      }),
      { numRuns: 300 },
    );
  });
});

describe("JSON Lines", () => {
  it("one value per line, newlines escaped", () => {
    const rows = [{ a: "x\ny" }, { b: [1, null] }];
    const text = rows.map(jsonLine).join("");
    expect(text.split("\n")).toHaveLength(3);
    expect(parseJsonLines(text)).toEqual(rows);
  });
});
