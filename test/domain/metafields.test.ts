import { describe, expect, it } from "vitest";
import {
  checkMetafields,
  copiedFromContactAddress,
  type MetafieldDefinition,
  type MetafieldValueType,
  missingBeforeComplete,
  notEditableByWorker,
  UNKNOWN_METAFIELD,
  valueError,
} from "../../src/domain/metafields";

const def = (
  value_type: MetafieldValueType,
  extra: Partial<MetafieldDefinition> = {},
): MetafieldDefinition => ({
  key: "k",
  value_type,
  choices: value_type === "select" || value_type === "multiselect" ? ["red", "green"] : [],
  is_required_before_complete: false,
  is_editable_by_worker: true,
  source: "manual",
  ...extra,
});

const USER = "https://api.test/users/0195f3a2-1b2c-7d3e-8f40-123456789abc/";

/** Per value type: values accepted and values refused. */
const CASES: Record<MetafieldValueType, { ok: unknown[]; bad: unknown[] }> = {
  string: {
    ok: ["", "door code 1234", "x".repeat(255), null],
    bad: [1, true, ["a"], {}, "x".repeat(256), "two\nlines"],
  },
  text: { ok: ["", "many\nlines", "x".repeat(5000)], bad: [1, false, ["a"]] },
  number: { ok: [0, -1.5, 1e9], bad: ["1", Number.NaN, Number.POSITIVE_INFINITY, true, [1]] },
  integer: { ok: [0, -7, 2 ** 40], bad: [1.5, "3", 2 ** 60, Number.NaN, false] },
  boolean: { ok: [true, false], bad: ["true", 0, 1, "yes"] },
  date: {
    ok: ["2026-02-28", "2024-02-29"],
    bad: ["2026-02-30", "2026-2-3", "2026-02-28T10:00:00Z", 20260228, ""],
  },
  datetime: {
    ok: ["2026-01-02T03:04:05Z", "2026-01-02T03:04:05.123+02:00", "2026-01-02T03:04Z"],
    bad: ["2026-01-02T03:04:05", "2026-01-02", "2026-13-02T03:04:05Z", 1700000000000],
  },
  select: { ok: ["red", "green"], bad: ["blue", "Red", ["red"], 1] },
  multiselect: { ok: [[], ["red"], ["red", "green"]], bad: ["red", ["blue"], ["red", "red"], [1]] },
  assignee: {
    ok: [USER, "0195f3a2-1b2c-7d3e-8f40-123456789abc"],
    bad: ["https://api.test/tasks/0195f3a2-1b2c-7d3e-8f40-123456789abc/", "someone", 5],
  },
  link: {
    ok: ["https://example.org/x?y=1", "http://localhost:8080/"],
    bad: ["javascript:alert(1)", "ftp://example.org/", "example.org", "", 3],
  },
};

describe("metafield values by type", () => {
  for (const [type, { ok, bad }] of Object.entries(CASES) as [
    MetafieldValueType,
    { ok: unknown[]; bad: unknown[] },
  ][]) {
    it(`${type}: accepts its values and null, refuses others with a message naming the type`, () => {
      for (const v of [...ok, null])
        expect(valueError(def(type), v), `${type} ${JSON.stringify(v)}`).toBeNull();
      for (const v of bad)
        expect(valueError(def(type), v), `${type} ${JSON.stringify(v)}`).toEqual(expect.any(String));
    });
  }

  it("names the choices when a choice is not listed", () => {
    expect(valueError(def("select"), "blue")).toBe('"blue" is not a valid choice. Choices: red, green.');
  });
});

describe("checkMetafields", () => {
  const defs = [def("integer", { key: "boxes" }), def("assignee", { key: "helper" })];

  it("refuses unknown keys and wrong types per key, and returns the users to resolve", () => {
    const r = checkMetafields({ boxes: "two", helper: USER, colour: "red" }, defs);
    expect(r.errors).toEqual({ boxes: ["Expected an integer."], colour: [UNKNOWN_METAFIELD] });
    expect([...r.userIds]).toEqual([["helper", "0195f3a2-1b2c-7d3e-8f40-123456789abc"]]);
  });

  it("keeps values whose definition was deleted when they are sent back unchanged", () => {
    const stored = { legacy: { a: 1 } };
    expect(checkMetafields({ legacy: { a: 1 }, boxes: 2 }, defs, stored).errors).toEqual({});
    expect(checkMetafields({ legacy: { a: 2 } }, defs, stored).errors).toEqual({
      legacy: [UNKNOWN_METAFIELD],
    });
  });

  it("refuses a 10,000-key object key by key without accepting any", () => {
    const big = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
    expect(Object.keys(checkMetafields(big, defs).errors)).toHaveLength(10_000);
  });
});

describe("rules around commands", () => {
  const defs = [
    def("string", { key: "code", is_required_before_complete: true }),
    def("multiselect", { key: "checks", is_required_before_complete: true }),
    def("boolean", { key: "paid", is_editable_by_worker: false }),
    def("string", { key: "gate", source: "contact_address" }),
  ];

  it("lists the keys still empty before complete", () => {
    expect(missingBeforeComplete({}, defs)).toEqual(["checks", "code"]);
    expect(missingBeforeComplete({ code: "  ", checks: [] }, defs)).toEqual(["checks", "code"]);
    expect(missingBeforeComplete({ code: "1234", checks: ["red"] }, defs)).toEqual([]);
  });

  it("lists the keys a worker may not set", () => {
    expect(notEditableByWorker({ paid: true, code: "1" }, defs)).toEqual(["paid"]);
    expect(notEditableByWorker({ code: "1" }, defs)).toEqual([]);
  });

  it("copies contact address values of source: contact_address only", () => {
    expect(copiedFromContactAddress({ gate: "B", code: "9" }, defs)).toEqual({ gate: "B" });
  });
});
