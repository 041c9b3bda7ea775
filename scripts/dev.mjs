#!/usr/bin/env node
// `npm run dev`: local service on workerd with D1, R2, Durable Objects and Queues persisted
// under .wrangler/state. Creates .dev.vars with fresh random secrets when missing, applies
// migrations, starts `wrangler dev`, seeds the demo account through the public sign-up and
// prints its credentials. Nothing here runs in a deployment.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { unstable_readConfig } from "wrangler";
import { mapStyleProblem } from "./map-style.mjs";

// `npm run dev -- --port 9000 --ip 0.0.0.0` (or PORT=9000): the options wrangler receives once.
const args = process.argv.slice(2);
function takeOption(name) {
  const i = args.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (i < 0) return undefined;
  const [arg] = args.splice(i, 1);
  return arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : args.splice(i, 1)[0];
}
const port = takeOption("--port") || process.env.PORT || "8787";
const ip = takeOption("--ip") || process.env.IP || "127.0.0.1";
const base = `http://localhost:${port}`;
const b64url = (n) => randomBytes(n).toString("base64url");

if (!existsSync(".dev.vars")) {
  const vars = [
    "# Local development only (never committed). Delete this file to get fresh secrets.",
    `JWT_SECRETS=dev-${b64url(4)}:${b64url(32)}`,
    `STORAGE_ACCESS_KEY_ID=AKDEV${randomBytes(8).toString("hex").toUpperCase()}`,
    `STORAGE_SECRET_ACCESS_KEY=${b64url(30)}`,
    "DEMO_ADMIN_PASSWORD=demo-admin-password",
    "ALLOW_SIGNUP=true",
    "WEBHOOKS_ALLOW_PRIVATE=true",
    "CORS_ORIGINS=*",
    `WEBHOOK_SECRETS_KEYS=dev-${b64url(4)}:${b64url(32)}`,
    "EMAIL_PROVIDER=local",
    "",
  ].join("\n");
  writeFileSync(".dev.vars", vars, { mode: 0o600 });
  console.log("Created .dev.vars with fresh random secrets.");
} else if (!/^WEBHOOK_SECRETS_KEYS=/m.test(readFileSync(".dev.vars", "utf8"))) {
  // A .dev.vars from before webhook secrets were encrypted: add the key it lacks.
  appendFileSync(".dev.vars", `\nWEBHOOK_SECRETS_KEYS=dev-${b64url(4)}:${b64url(32)}\n`);
  console.log("Added WEBHOOK_SECRETS_KEYS to .dev.vars.");
}
const devVars = Object.fromEntries(
  readFileSync(".dev.vars", "utf8")
    .split("\n")
    .filter((l) => l.includes("=") && !l.startsWith("#"))
    .map((l) => [l.slice(0, l.indexOf("=")).trim(), l.slice(l.indexOf("=") + 1).trim()]),
);

// A map style the console's CSP would trust wrongly (an http: URL, a wildcard host) is refused
// here, before anything starts (issue 52; the rule: src/domain/map-style.ts).
{
  const style = devVars.MAP_STYLE_URL ?? unstable_readConfig({ config: "wrangler.jsonc" }).vars.MAP_STYLE_URL;
  const problem = mapStyleProblem(style ?? "");
  if (problem) {
    console.error(
      `${problem} Set an https: style URL with one host, or leave it empty (docs/configuration.md).`,
    );
    process.exit(1);
  }
}

// The directory and every account shard (contract §24) carry the same schema. Wrangler prints
// a table of every migration after each one it applies (thousands of lines on a fresh clone):
// that goes to a log file, and one line says what happened.
const MIGRATIONS_LOG = ".wrangler/migrations.log";
mkdirSync(".wrangler", { recursive: true });
writeFileSync(MIGRATIONS_LOG, "");
const bindings = d1Bindings();
let applied = 0;
for (const binding of bindings) {
  const migrate = spawnSync("npx", ["wrangler", "d1", "migrations", "apply", binding, "--local"], {
    encoding: "utf8",
    env: { ...process.env, CI: "true" },
  });
  appendFileSync(
    MIGRATIONS_LOG,
    `$ wrangler d1 migrations apply ${binding} --local\n${migrate.stdout}${migrate.stderr}\n`,
  );
  if (migrate.status !== 0) {
    console.error(
      `${migrate.stdout}${migrate.stderr}\nMigrating ${binding} failed (the whole output: ${MIGRATIONS_LOG}).`,
    );
    process.exit(migrate.status ?? 1);
  }
  // Wrangler reprints the whole table after each migration: count each name once.
  applied += new Set([...migrate.stdout.matchAll(/(\S+\.sql)\s+│\s*✅/g)].map((m) => m[1])).size;
}
console.log(
  `Migrations: ${bindings.length} local databases (${bindings.join(", ")}) up to date, ${applied} applied now; wrangler's output in ${MIGRATIONS_LOG}.`,
);

// Both Workers in one session: the API (the first config, which receives the requests) and the
// assets-only Worker its ASSETS service binding reaches (static/wrangler.jsonc). --test-scheduled:
// GET /__scheduled runs the cron, which a local wrangler dev never fires by itself
// (`npm run accounts:move` drives a move with it).
// The static Worker's build command copies its files into public/ before it reads them.
const configs = ["-c", "wrangler.jsonc", "-c", "static/wrangler.jsonc"];
const dev = spawn(
  "npx",
  ["wrangler", "dev", ...configs, "--port", port, "--ip", ip, "--test-scheduled", ...args],
  {
    stdio: "inherit",
  },
);
const stop = () => dev.kill("SIGINT");
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
dev.on("exit", (code) => process.exit(code ?? 0));

async function seed() {
  for (let i = 0; i < 120; i++) {
    try {
      const r = await fetch(`${base}/openapi.json`);
      if (r.ok) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 500));
  }
  const email = "admin@example.com";
  const password = devVars.DEMO_ADMIN_PASSWORD || "demo-admin-password";
  const r = await fetch(`${base}/accounts/`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name: "Demo account", email, password }),
  });
  const seeded =
    r.status === 201 ? "seeded" : r.status === 400 ? "already seeded" : `not seeded (HTTP ${r.status})`;
  console.log(
    [
      "",
      "──────────────────────────────────────────────────────────────",
      ` API               ${base}/`,
      ` API docs          ${base}/docs/`,
      ` Dispatch console  ${base}/console/`,
      ` Field app         ${base}/app/`,
      ...(ip === "0.0.0.0"
        ? [` Listening on every interface: other devices use http://<this machine's address>:${port}`]
        : []),
      ` Demo account ${seeded}: ${email} / ${password}   (the console's sign-in too)`,
      ` Sign in: curl -s -X POST ${base}/authenticate/ -H 'Content-Type: application/json' \\`,
      `            -d '{"username":"${email}","password":"${password}"}'`,
      "──────────────────────────────────────────────────────────────",
      "",
    ].join("\n"),
  );
}
seed();

/** The D1 bindings of wrangler.jsonc: DB (the directory) and the shards. */
function d1Bindings() {
  return unstable_readConfig({ config: "wrangler.jsonc" }).d1_databases.map((d) => d.binding);
}
