import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkFormData,
  FORM_FIELD_TYPES,
  type FormFieldDef,
  type FormFieldType,
  missingRequired,
  snapshotOf,
  startingData,
  visibleData,
} from "../../src/domain/forms";

const DOC = "https://api.test/documents/0195f3a2-1b2c-7d3e-8f40-123456789abc/";
const SIG = "https://api.test/signatures/0195f3a2-1b2c-7d3e-8f40-123456789abd/";
const CHOICES = ["a", "b", "c"];

/** Values of each type, labelled valid or not by construction: the model the checker must match. */
const VALUES: Record<FormFieldType, { ok: unknown[]; bad: unknown[] }> = {
  text: { ok: ["", "x", "multi\nline"], bad: [1, true, ["x"]] },
  textarea: { ok: ["", "long text"], bad: [2, {}] },
  number: { ok: [0, 3.5, -2], bad: ["1", Number.NaN, true] },
  boolean: { ok: [true, false], bad: ["true", 0] },
  date: { ok: ["2026-03-01"], bad: ["2026-02-30", "01.03.2026", 5] },
  time: { ok: ["08:30", "23:59:59"], bad: ["24:00", "8:30", "08:30Z"] },
  datetime: {
    ok: ["2026-03-01T08:30:00Z", "2026-03-01T08:30+02:00"],
    bad: ["2026-03-01T08:30:00", "2026-03-01"],
  },
  select: { ok: ["a", "c"], bad: ["d", ["a"]] },
  multiselect: { ok: [[], ["a", "b"]], bad: ["a", ["a", "a"], ["z"]] },
  photo: { ok: [DOC], bad: [SIG, "photo.jpg"] },
  signature: { ok: [SIG], bad: [DOC, 1] },
  section: { ok: [], bad: ["anything", true] },
};

const fieldArb = (key: string): fc.Arbitrary<FormFieldDef> =>
  fc.record({
    id: fc.constant(`id-${key}`),
    key: fc.constant(key),
    label: fc.string({ maxLength: 10 }),
    field_type: fc.constantFrom(...FORM_FIELD_TYPES),
    choices: fc.constant(CHOICES),
    default: fc.constant(null),
    required: fc.boolean(),
    position: fc.integer({ min: 0, max: 5 }),
    visible_to_worker: fc.boolean(),
    collapsed: fc.boolean(),
    layout: fc.constantFrom("list" as const, "table" as const),
  });

const formArb = fc
  .uniqueArray(fc.stringMatching(/^[a-z][a-z0-9_]{0,6}$/), { minLength: 1, maxLength: 8 })
  .chain((keys) => fc.tuple(...keys.map(fieldArb)));

type Entry = { key: string; value: unknown; valid: boolean };

/** Random data for a form: known keys with valid or invalid values, and unknown keys. */
const dataArb = (fields: FormFieldDef[]) =>
  fc.array(
    fc.oneof(
      fc.constantFrom(...fields).chain((f) => {
        const { ok, bad } = VALUES[f.field_type];
        // null is every field's empty value, a section's too.
        const options: fc.Arbitrary<Entry>[] = [fc.constant({ key: f.key, value: null, valid: true })];
        if (ok.length)
          options.push(fc.constantFrom(...ok).map((value) => ({ key: f.key, value, valid: true })));
        if (bad.length)
          options.push(fc.constantFrom(...bad).map((value) => ({ key: f.key, value, valid: false })));
        return fc.oneof(...options);
      }),
      fc.stringMatching(/^zz[a-z]{0,4}$/).map((key) => ({ key, value: 1, valid: false })),
    ),
    { maxLength: 10 },
  );

describe("form data against a model of validity", () => {
  it("refuses exactly the keys the model says are invalid, for dispatchers and workers", () => {
    fc.assert(
      fc.property(
        formArb.chain((fields) => fc.tuple(fc.constant(fields), dataArb(fields), fc.boolean())),
        ([fields, entries, worker]) => {
          const data: Record<string, unknown> = {};
          const expectedValid = new Map<string, boolean>();
          for (const e of entries) {
            data[e.key] = e.value;
            expectedValid.set(e.key, e.valid); // the last entry of a key wins, as in the object
          }
          const byKey = new Map(fields.map((f) => [f.key, f]));
          const { errors } = checkFormData(data, fields, { worker });
          for (const [key, valid] of expectedValid) {
            const hidden = worker && byKey.get(key)?.visible_to_worker === false;
            expect(key in errors, `${key}=${JSON.stringify(data[key])} worker=${worker}`).toBe(
              !valid || hidden,
            );
          }
          expect(Object.keys(errors).every((k) => expectedValid.has(k))).toBe(true);
        },
      ),
      { numRuns: 400, seed: 2110 },
    );
  });
});

describe("completion and defaults", () => {
  const field = (
    key: string,
    field_type: FormFieldType,
    extra: Partial<FormFieldDef> = {},
  ): FormFieldDef => ({
    id: `id-${key}`,
    key,
    label: key,
    field_type,
    choices: CHOICES,
    default: null,
    required: false,
    position: 0,
    visible_to_worker: true,
    collapsed: false,
    layout: "list",
    ...extra,
  });

  it("names the required fields left empty, in the form's order", () => {
    const fields = [
      field("notes", "text", { required: true, position: 2 }),
      field("ok", "boolean", { required: true, position: 1 }),
      field("head", "section", { required: true, position: 0 }),
    ];
    expect(missingRequired({}, fields)).toEqual(["ok", "notes"]);
    expect(missingRequired({ ok: false, notes: " " }, fields)).toEqual(["notes"]);
    expect(missingRequired({ ok: false, notes: "done" }, fields)).toEqual([]);
  });

  it("starts from the fields' defaults, overridden by the task's valid values", () => {
    const fields = [
      field("colour", "select", { default: "a" }),
      field("count", "number", { default: 1 }),
      field("s", "section"),
    ];
    expect(startingData(fields, { colour: "b", count: "many", other: 1 })).toEqual({ colour: "b", count: 1 });
  });

  it("hides fields not visible to workers, and snapshots a copy that later edits do not reach", () => {
    const fields = [field("public", "text"), field("secret", "text", { visible_to_worker: false })];
    expect(visibleData({ public: "p", secret: "s" }, fields)).toEqual({ public: "p" });
    const snap = snapshotOf({ id: "f", name: "Check", description: "" }, fields);
    fields[0].label = "changed";
    fields[0].choices.push("d");
    expect(snap.fields[0].label).toBe("public");
    expect(snap.fields[0].choices).toEqual(["a", "b", "c"]);
  });
});
