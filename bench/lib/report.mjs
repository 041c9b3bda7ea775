// The bench's results: figures (with a target) and diagnostics (without one, printed to explain
// the figures), each under a stable dotted id such as `read.task.ratio`. The ids are the
// interface of bench/results.json: a figure keeps its id when its label or its way of being
// measured is refined, so runs can be compared over time. A value that could not be measured
// (null, NaN, infinite, or never reported by its section) fails the run: it is listed and the
// process exits non-zero, rather than a table printing `null`.

const ID = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$/;
const COMPARISON = /^(>=|<=|<|>|=)\s*(-?[\d.]+)/;

/** Whether `value` meets a target written as `>= 0.5`, `< 2`, `= 7000` (null: no comparison). */
export function meets(value, target) {
  const m = COMPARISON.exec(target ?? "");
  if (!m || !Number.isFinite(value)) return null;
  const bound = Number(m[2]);
  switch (m[1]) {
    case ">=":
      return value >= bound;
    case "<=":
      return value <= bound;
    case "<":
      return value < bound;
    case ">":
      return value > bound;
    default:
      return value === bound;
  }
}

const rounded = (v) => (Number.isFinite(v) ? Math.round(v * 1000) / 1000 : null);

export function createReport() {
  const entries = new Map();
  const promised = new Map(); // id → the section that promised it
  const notes = new Map(); // id → why it has no value

  function add(kind, id, value, { label, unit = "", target = "", ok = true, met } = {}) {
    if (!ID.test(id)) throw new Error(`bench: "${id}" is not a dotted id (e.g. read.task.ratio)`);
    if (entries.has(id)) throw new Error(`bench: ${id} reported twice`);
    const v = rounded(value);
    const entry = { id, label: label ?? id, value: v, unit };
    if (kind === "figure") {
      // `met`: true or false, or null for a reference figure (no target to meet).
      const compared = met ?? meets(value, target);
      entry.target = target;
      entry.met = v === null ? false : compared === null ? null : Boolean(compared && ok);
    }
    entries.set(id, { kind, ...entry });
  }

  return {
    /** A figure with its target (`>= 0.5`, `< 2`, `reference`...); `ok: false` fails it anyway. */
    figure: (id, value, opts) => add("figure", id, value, opts),
    /** A number printed under the table to explain the figures (no target). */
    diagnostic: (id, value, opts) => add("diagnostic", id, value, opts),
    /** A section says which ids it reports: one it did not report counts as unmeasured. */
    promise(section, ids) {
      for (const id of ids) promised.set(id, section);
    },
    /** A section failed: what it promised and did not report gets this reason. */
    failed(section, error) {
      for (const [id, s] of promised) if (s === section && !entries.has(id)) notes.set(id, String(error));
    },
    /** The ids without a value, each with the reason when known. */
    unmeasured() {
      const out = [];
      for (const [id, e] of entries)
        if (e.value === null) out.push({ id, reason: notes.get(id) ?? "no value (null or NaN)" });
      for (const [id] of promised)
        if (!entries.has(id)) out.push({ id, reason: notes.get(id) ?? "not reported by its section" });
      return out;
    },
    json(settings) {
      const all = [...entries.values()];
      const strip = ({ kind, ...e }) => e;
      return {
        settings,
        figures: all.filter((e) => e.kind === "figure").map(strip),
        diagnostics: all.filter((e) => e.kind === "diagnostic").map(strip),
        unmeasured: this.unmeasured(),
      };
    },
    /** The table: figures, then diagnostics, one line each, id first. */
    print(write = console.log) {
      const all = [...entries.values()];
      const figures = all.filter((e) => e.kind === "figure");
      const diagnostics = all.filter((e) => e.kind === "diagnostic");
      const w = Math.max(10, ...all.map((e) => e.id.length));
      const value = (e) => (e.value === null ? "NOT MEASURED" : String(e.value)).padStart(12);
      const met = (e) => (e.met === null ? "-" : e.met ? "yes" : "NO");
      write("");
      write(
        `${"figure".padEnd(w)}  ${"value".padStart(12)} ${"unit".padEnd(6)} ${"target".padEnd(14)} met  what`,
      );
      for (const e of figures)
        write(
          `${e.id.padEnd(w)}  ${value(e)} ${e.unit.padEnd(6)} ${e.target.padEnd(14)} ${met(e).padEnd(4)} ${e.label}`,
        );
      if (diagnostics.length) {
        write("");
        write(`${"diagnostic".padEnd(w)}  ${"value".padStart(12)} ${"unit".padEnd(6)} what`);
        for (const e of diagnostics) write(`${e.id.padEnd(w)}  ${value(e)} ${e.unit.padEnd(6)} ${e.label}`);
      }
    },
  };
}
