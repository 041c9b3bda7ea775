/**
 * Staging an import's file (contract §21): the file is streamed from R2 once, decoded as strict
 * UTF-8 and parsed as RFC 4180, and each row is stored in `import_rows` with its spreadsheet
 * number (the header is row 1; an empty line still counts) and its group: the object it makes
 * (an orders import groups rows by `order.external_id`, in the order the orders first appear;
 * other kinds make one object a row).
 *
 * Reading everything before applying anything is what lets the consumer refuse a file that is
 * not UTF-8, is not CSV, or has more than MAX_IMPORT_ROWS rows with nothing applied — never a
 * partial import without its error list. Staging starts over on redelivery (its rows are
 * keyed by (import, row), so a second pass replaces the first's).
 */
import { CsvReader, CsvSyntaxError, isBlankRecord } from "../../formats/csv";
import { parseJson } from "../tasks/types";
import type { RowError } from "./columns";
import type { ImportRow } from "./index";

export const DEFAULT_MAX_IMPORT_ROWS = 100_000;
/** JSON text per INSERT (one bound parameter; D1 allows up to 2 MB a value). */
const STAGE_BYTES = 256 * 1024;
/** Longest row (its cells as JSON): no object of the API is larger; D1 would refuse far larger. */
export const MAX_IMPORT_ROW_BYTES = 256 * 1024;

export const maxImportRows = (env: Env) => {
  const n = Number((env as unknown as Record<string, string | undefined>).MAX_IMPORT_ROWS);
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_MAX_IMPORT_ROWS;
};

/** Why a file cannot be imported at all; the import fails with it and applies nothing. */
export class FileProblem extends Error {
  constructor(
    message: string,
    readonly error: RowError | null = null,
  ) {
    super(message);
  }
}

export type StageResult = { totalRows: number; groups: number };

export async function stageImport(env: Env, row: ImportRow): Promise<StageResult> {
  const db = env.DB;
  const header = parseJson<string[]>(row.columns, []);
  const groupColumn = row.kind === "orders" ? header.indexOf("order.external_id") : -1;
  const limit = maxImportRows(env);
  const obj = await env.FILES.get(row.file_key);
  if (!obj) throw new FileProblem("The uploaded file is gone.");

  await db.prepare("DELETE FROM import_rows WHERE import_id = ?").bind(row.id).run();
  const insert = (items: unknown[]) =>
    db
      .prepare(
        `INSERT OR REPLACE INTO import_rows (import_id, row, grp, cells)
         SELECT ?, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?)`,
      )
      .bind(row.id, JSON.stringify(items));
  let pending: unknown[] = [];
  let pendingBytes = 0;
  let statements: D1PreparedStatement[] = [];
  const flush = async (all: boolean) => {
    if (pending.length) {
      statements.push(insert(pending));
      pending = [];
      pendingBytes = 0;
    }
    if (statements.length >= 8 || (all && statements.length)) {
      await db.batch(statements);
      statements = [];
    }
  };

  const groups = new Map<string, number>();
  let nextGroup = 0;
  let dataRows = 0;
  let headerSeen = false;
  const reader = new CsvReader();
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  let bytesRead = 0;

  const take = async (records: string[][]) => {
    const base = reader.count - records.length;
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      const number = base + i + 1;
      if (!headerSeen) {
        headerSeen = true;
        if (JSON.stringify(r.map((h) => h.trim())) !== row.columns) {
          throw new FileProblem("The file's header changed after the import was created.");
        }
        continue;
      }
      if (isBlankRecord(r)) continue;
      dataRows++;
      if (dataRows > limit) {
        throw new FileProblem(
          `The file has more than ${limit} rows (MAX_IMPORT_ROWS); nothing was imported.`,
          {
            row: number,
            field: null,
            message: `Row limit of ${limit} rows exceeded.`,
          },
        );
      }
      let grp: number;
      const key = groupColumn >= 0 ? (r[groupColumn] ?? "") : "";
      if (groupColumn >= 0 && key !== "") {
        grp = groups.get(key) ?? nextGroup++;
        groups.set(key, grp);
      } else grp = nextGroup++;
      const cells = JSON.stringify(r);
      if (cells.length > MAX_IMPORT_ROW_BYTES) {
        const kib = Math.ceil(cells.length / 1024);
        throw new FileProblem(
          `Row ${number} is ${kib} KiB long; a row may have at most 256 KiB. Nothing was imported.`,
          {
            row: number,
            field: null,
            message: `This row is ${kib} KiB long; at most 256 KiB.`,
          },
        );
      }
      pending.push([number, grp, cells]);
      pendingBytes += cells.length + 24;
      if (pendingBytes >= STAGE_BYTES) await flush(false);
    }
  };

  const source = obj.body.getReader();
  try {
    for (;;) {
      const { done, value } = await source.read();
      if (done) break;
      let text: string;
      try {
        text = decoder.decode(value, { stream: true });
      } catch {
        throw new FileProblem(
          `The file is not valid UTF-8 text (in bytes ${bytesRead + 1} to ${bytesRead + value.length}).`,
        );
      }
      bytesRead += value.length;
      await take(reader.push(text));
    }
    let rest: string;
    try {
      rest = decoder.decode();
    } catch {
      throw new FileProblem("The file is not valid UTF-8 text (it ends inside a character).");
    }
    await take([...reader.push(rest), ...reader.end()]);
  } catch (err) {
    await source.cancel().catch(() => {});
    if (err instanceof CsvSyntaxError) {
      throw new FileProblem(`Row ${err.record}: ${err.message}`, {
        row: err.record,
        field: null,
        message: err.message,
      });
    }
    throw err;
  }
  await flush(true);
  return { totalRows: dataRows, groups: nextGroup };
}
