#!/usr/bin/env node
// CI: every deployed environment of wrangler.jsonc declares what the top level (local
// development and tests) declares: the same vars, bindings and queue consumers. Wrangler does
// not inherit these into environments, so a setting added at the top and forgotten in an
// environment would be missing only once deployed.
import { readFileSync } from "node:fs";
import { unstable_readConfig } from "wrangler";
import { mapStyleProblem } from "./map-style.mjs";

const top = unstable_readConfig({ config: "wrangler.jsonc" });
const problems = [];
const keys = (o) => Object.keys(o ?? {}).sort();
const bindings = (c) =>
  [
    ...c.d1_databases.map((d) => `d1:${d.binding}`),
    ...c.r2_buckets.map((b) => `r2:${b.binding}`),
    ...c.durable_objects.bindings.map((b) => `do:${b.name}:${b.class_name}`),
    ...c.queues.producers.map((q) => `queue:${q.binding}`),
    ...(c.send_email ?? []).map((e) => `email:${e.name}`),
    ...(c.services ?? []).map((b) => `service:${b.binding}`),
  ].sort();
const topMapStyle = mapStyleProblem(top.vars.MAP_STYLE_URL ?? "");
if (topMapStyle) problems.push(`top level: ${topMapStyle}`);
for (const name of ["staging", "production"]) {
  const env = unstable_readConfig({ config: "wrangler.jsonc", env: name });
  // The console's CSP trusts this origin (issue 52; the rule: src/domain/map-style.ts).
  const mapStyle = mapStyleProblem(env.vars.MAP_STYLE_URL ?? "");
  if (mapStyle) problems.push(`env.${name}: ${mapStyle}`);
  const missingVars = keys(top.vars).filter((k) => !(k in env.vars));
  if (missingVars.length) problems.push(`env.${name}: vars missing: ${missingVars.join(", ")}`);
  const a = bindings(top).join(" ");
  const b = bindings(env).join(" ");
  if (a !== b) problems.push(`env.${name}: bindings differ:\n  top: ${a}\n  env: ${b}`);
  const suffix = env.vars.QUEUE_SUFFIX ?? "";
  const consumers = (c, s) =>
    c.queues.consumers
      .map((q) => `${q.queue.slice(0, q.queue.length - s.length || undefined)}`)
      .sort()
      .join(" ");
  if (consumers(top, "") !== consumers(env, suffix))
    problems.push(`env.${name}: queue consumers differ from the top level's`);
  for (const q of [
    ...env.queues.producers.map((p) => p.queue),
    ...env.queues.consumers.map((c) => c.queue),
  ]) {
    if (suffix && !q.endsWith(suffix)) problems.push(`env.${name}: queue ${q} lacks the suffix ${suffix}`);
  }
}
// The static files live in an assets-only Worker (static/wrangler.jsonc): the API Worker has no
// `assets` of its own (the platform's static-assets router would then stand in front of every API
// request), reaches that Worker through its ASSETS service binding in every environment, and the
// static Worker has no address of its own (no workers.dev, no preview URLs, no routes).
const staticConfig = unstable_readConfig({ config: "static/wrangler.jsonc" });
if (top.assets)
  problems.push(
    "wrangler.jsonc: `assets` on the API Worker; the static files belong to static/wrangler.jsonc",
  );
if (staticConfig.main) problems.push("static/wrangler.jsonc: an assets-only Worker has no `main`");
if (staticConfig.workers_dev !== false || staticConfig.preview_urls !== false || staticConfig.routes?.length)
  problems.push(
    "static/wrangler.jsonc: the static Worker must have no workers.dev address, preview URLs or routes",
  );
for (const [name, c] of [
  ["top level", top],
  ...["staging", "production"].map((n) => [
    `env.${n}`,
    unstable_readConfig({ config: "wrangler.jsonc", env: n }),
  ]),
]) {
  const binding = (c.services ?? []).find((b) => b.binding === "ASSETS");
  const expected = `${staticConfig.name}${c.vars.QUEUE_SUFFIX ?? ""}`;
  if (binding?.service !== expected)
    problems.push(
      `wrangler.jsonc ${name}: ASSETS must be a service binding to ${expected} (static/wrangler.jsonc, named per environment)`,
    );
}

// Every secret the Worker requires (src/env.d.ts, not optional) is one `npm run deploy` sets.
const required = [...readFileSync("src/env.d.ts", "utf8").matchAll(/^\s+([A-Z][A-Z0-9_]+): string;/gm)].map(
  (m) => m[1],
);
const deploy = readFileSync("scripts/deploy.mjs", "utf8");
for (const name of required) {
  if (!new RegExp(`^\\s+${name}: \\(\\) =>`, "m").test(deploy))
    problems.push(`secret ${name} is required but npm run deploy does not set it`);
}

if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log(
  "wrangler.jsonc: staging and production declare every var, binding and consumer of the top level; the static files' Worker is bound in each.",
);
