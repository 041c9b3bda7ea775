import { getTableColumns, type Table } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { type contactAddresses, type orders, tasks } from "../../src/db/schema";
import type { ContactAddressRow } from "../../src/services/contact-addresses";
import type { OrderRow } from "../../src/services/orders/serialize";
import { TASK_COLUMNS, TASK_DEFAULTS, type TaskRow } from "../../src/services/tasks/types";

/**
 * The services read and write rows with raw SQL (D1's batches and guarded statements), so
 * their row types are written by hand. These checks tie them to the drizzle tables that the
 * migrations are generated from: adding a column to a table without adding it to its row type
 * (or the reverse) fails the typecheck, and the column lists fail here.
 */
type ColumnNames<T extends Table> = {
  [K in keyof T["_"]["columns"]]: T["_"]["columns"][K]["_"]["name"];
}[keyof T["_"]["columns"]];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const taskRowMatchesTable: Same<keyof TaskRow, ColumnNames<typeof tasks>> = true;
const orderRowMatchesTable: Same<keyof OrderRow, ColumnNames<typeof orders>> = true;
const contactAddressRowMatchesTable: Same<
  keyof ContactAddressRow,
  ColumnNames<typeof contactAddresses>
> = true;

const names = (t: Table) =>
  Object.values(getTableColumns(t))
    .map((c) => c.name)
    .sort();

describe("row types and column lists follow the drizzle tables", () => {
  it("TASK_COLUMNS is every column of tasks, once", () => {
    expect([taskRowMatchesTable, orderRowMatchesTable, contactAddressRowMatchesTable]).toEqual([
      true,
      true,
      true,
    ]);
    expect([...TASK_COLUMNS].sort()).toEqual(names(tasks));
  });

  it("TASK_DEFAULTS names only columns of tasks", () => {
    const columns = new Set(names(tasks));
    expect(Object.keys(TASK_DEFAULTS).filter((k) => !columns.has(k))).toEqual([]);
  });
});
