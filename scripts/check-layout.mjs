#!/usr/bin/env node
// CI: the layout rules of docs/layout.md, checked on the import graph of src/:
//   - nothing under src/services, src/domain, src/solver, src/render or src/formats imports
//     the HTTP API layer (src/api), so imports and cron jobs call the same verbs as the API;
//   - src/domain, src/solver, src/solver-check, src/render and src/formats import no
//     bindings-bound code (they are pure: no services, queues, durable objects);
//   - src/solver imports nothing outside itself, and src/solver-check nothing outside itself
//     (the feasibility checker shares no code with the solver);
//   - no import circle anywhere in src/;
//   - no hand-written file over 600 lines (generated data excepted);
//   - only src/db/shards.ts reaches a shard binding (`SHARD_<n>`, the `SHARDS` setting): every
//     request, object, consumer and cron run gets its account's database from that resolver.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve("src");
const MAX_LINES = 600;
const GENERATED = [/\/data\//];

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith(".ts") && !p.endsWith(".d.ts") ? [p] : [];
  });
}

function resolveImport(from, spec) {
  if (!spec.startsWith(".")) return null;
  const base = resolve(dirname(from), spec);
  for (const candidate of [`${base}.ts`, join(base, "index.ts"), base]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {}
  }
  return null;
}

const files = walk(ROOT);
const graph = new Map();
const problems = [];
const IMPORT_RE = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"|import\("([^"]+)"\)/g;
for (const file of files) {
  const text = readFileSync(file, "utf8");
  const rel = relative(ROOT, file);
  const lines = text.split("\n").length;
  if (lines > MAX_LINES && !GENERATED.some((re) => re.test(`/${rel}`)) && !rel.endsWith(".test.ts")) {
    problems.push(`${rel}: ${lines} lines (at most ${MAX_LINES})`);
  }
  // A binding is reached as a property (`env.SHARD_0`, `env["SHARD_0"]`); the name in text (a
  // bookmark's tag, an example in the document) reaches nothing.
  if (rel !== "db/shards.ts" && /(?:\.|\[\s*["'`])SHARD_[0-9]+\b|\.SHARDS\b/.test(text)) {
    problems.push(`${rel} reaches a shard binding; use the resolver (src/db/shards.ts)`);
  }
  const deps = new Set();
  for (const m of text.matchAll(IMPORT_RE)) {
    const target = resolveImport(file, m[1] ?? m[2]);
    if (target) deps.add(target);
  }
  graph.set(file, deps);
  const area = rel.split("/")[0];
  for (const dep of deps) {
    const depArea = relative(ROOT, dep).split("/")[0];
    if (["services", "domain", "solver", "render", "formats"].includes(area) && depArea === "api") {
      problems.push(`${rel} imports the API layer (${relative(ROOT, dep)})`);
    }
    if (
      ["domain", "solver", "solver-check", "render", "formats"].includes(area) &&
      ["services", "queues", "durable-objects", "api"].includes(depArea)
    ) {
      problems.push(`${rel} is pure but imports ${relative(ROOT, dep)}`);
    }
    // The solver is self-contained (instance in, solution out), and its checker shares no code with it.
    if (area === "solver" && depArea !== "solver")
      problems.push(`${rel}: the solver imports ${relative(ROOT, dep)}`);
    if (area === "solver-check" && depArea !== "solver-check") {
      problems.push(
        `${rel}: the checker imports ${relative(ROOT, dep)} (it must share no code with the solver)`,
      );
    }
  }
}

// Import circles: Tarjan's strongly connected components.
let index = 0;
const stack = [];
const meta = new Map();
function strongConnect(v) {
  meta.set(v, { index, low: index, onStack: true });
  index++;
  stack.push(v);
  for (const w of graph.get(v) ?? []) {
    if (!graph.has(w)) continue;
    if (!meta.has(w)) {
      strongConnect(w);
      meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).low);
    } else if (meta.get(w).onStack) {
      meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).index);
    }
  }
  if (meta.get(v).low === meta.get(v).index) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      meta.get(w).onStack = false;
      component.push(w);
    } while (w !== v);
    if (component.length > 1) {
      problems.push(`import circle: ${component.map((f) => relative(ROOT, f)).join(" → ")}`);
    }
  }
}
for (const v of graph.keys()) if (!meta.has(v)) strongConnect(v);

if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log(`layout: ${files.length} files, no circle, no layer crossing, none over ${MAX_LINES} lines`);
