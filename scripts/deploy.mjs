#!/usr/bin/env node
// `npm run deploy -- <staging|production> [--plan]`: everything a deployment needs, in order,
// each step idempotent (run it again after a failure, or to deploy a new version):
//   1. the D1 databases, the directory and each shard (ids written into wrangler.jsonc for that environment),
//   2. the R2 bucket, 3. the queues and their dead-letter queues,
//   4. the remote D1 migrations, on every database,
//   5. the static files' Worker (static/wrangler.jsonc), named for the environment,
//   6. the Worker, with source maps and any secret it does not have yet (generated here;
//      existing secrets are never replaced).
// `--plan` prints the commands without running them (CI runs it to check the configuration).
// Nothing here touches local development.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { experimental_patchConfig, unstable_readConfig } from "wrangler";
import { mapStyleProblem } from "./map-style.mjs";

const CONFIG = "wrangler.jsonc";
const args = process.argv.slice(2);
const env = args.find((a) => !a.startsWith("--"));
const planOnly = args.includes("--plan");
if (!["staging", "production"].includes(env)) {
  console.error("usage: npm run deploy -- <staging|production> [--plan]");
  process.exit(2);
}

const config = unstable_readConfig({ config: CONFIG, env });
// Refused before anything is made (issue 52; the rule: src/domain/map-style.ts).
const mapStyle = mapStyleProblem(config.vars.MAP_STYLE_URL ?? "");
if (mapStyle) {
  console.error(`env.${env}: ${mapStyle} Set an https: style URL with one host, or leave it empty.`);
  process.exit(1);
}
const b64url = (n) => randomBytes(n).toString("base64url");

/** Secrets the Worker reads (src/env.d.ts), with how a fresh value is made. */
const SECRETS = {
  JWT_SECRETS: () => `k${new Date().toISOString().slice(0, 10).replaceAll("-", "")}:${b64url(32)}`,
  STORAGE_ACCESS_KEY_ID: () => `AK${randomBytes(9).toString("hex").toUpperCase()}`,
  STORAGE_SECRET_ACCESS_KEY: () => b64url(30),
  WEBHOOK_SECRETS_KEYS: () => `k${new Date().toISOString().slice(0, 10).replaceAll("-", "")}:${b64url(32)}`,
  BOOTSTRAP_TOKEN: () => b64url(32),
};

function wrangler(argv, { input, allowFailure = /$^/ } = {}) {
  const shown = `npx wrangler ${argv.join(" ")}`;
  console.log(`$ ${shown}`);
  if (planOnly) return { ok: true, stdout: "" };
  const r = spawnSync("npx", ["wrangler", ...argv], {
    encoding: "utf8",
    input,
    stdio: [input === undefined ? "inherit" : "pipe", "pipe", "pipe"],
  });
  const out = `${r.stdout}${r.stderr}`;
  if (r.status === 0) return { ok: true, stdout: r.stdout };
  if (allowFailure.test(out)) {
    console.log("  (already there)");
    return { ok: false, stdout: r.stdout };
  }
  process.stderr.write(out);
  console.error(
    `\nFailed: ${shown}\nFix the cause and run the same command again; finished steps are skipped.`,
  );
  process.exit(r.status ?? 1);
}

const EXISTS = /already exists|already taken|already own|code: 10004|code: 11009|code: 7502/i;

console.log(`\n== ${config.name} (${env})\n`);
spawnSync("npx", ["wrangler", "whoami"], { stdio: planOnly ? "ignore" : "inherit" });

// 1. D1: the directory (DB) and every account shard (SHARD_<n>) the configuration declares
// (contract §24; how many: the shard bindings in wrangler.jsonc, listed in the SHARDS var).
const databases = config.d1_databases;
for (const db of databases) {
  wrangler(["d1", "create", db.database_name], { allowFailure: EXISTS });
  if (!planOnly) {
    const info = JSON.parse(wrangler(["d1", "info", db.database_name, "--json"]).stdout);
    if (info.uuid && info.uuid !== db.database_id) {
      db.database_id = info.uuid;
      experimental_patchConfig(
        CONFIG,
        {
          env: {
            [env]: {
              d1_databases: databases.map((d) => ({ binding: d.binding, database_id: d.database_id })),
            },
          },
        },
        true,
      );
      console.log(`  wrote database_id ${info.uuid} of ${db.binding} into ${CONFIG} (env.${env}); commit it`);
    }
  }
}

// 2. R2
for (const bucket of config.r2_buckets) {
  wrangler(["r2", "bucket", "create", bucket.bucket_name], { allowFailure: EXISTS });
}

// 3. Queues (producers, consumers and every dead-letter queue)
const queues = new Set([
  ...config.queues.producers.map((q) => q.queue),
  ...config.queues.consumers.flatMap((q) => [q.queue, q.dead_letter_queue].filter(Boolean)),
]);
for (const q of queues) wrangler(["queues", "create", q], { allowFailure: EXISTS });

// 4. Migrations, on the directory and on every shard (one schema for all: src/db/shards.ts)
for (const db of databases) {
  wrangler(["d1", "migrations", "apply", db.binding, "--remote", "--env", env], { input: "y\n" });
}

// 5. The static files' Worker (static/wrangler.jsonc: the /docs/ page and the PDFs' fonts, no
// public address), under the name this environment's ASSETS service binding gives it. First, so
// the API Worker's binding has its target when the API deploys.
const assets = (config.services ?? []).find((b) => b.binding === "ASSETS");
if (!assets) {
  console.error(`${CONFIG}: env.${env} has no ASSETS service binding (run npm run config:envs)`);
  process.exit(1);
}
wrangler(["deploy", "--config", "static/wrangler.jsonc", "--name", assets.service]);

// 6. Secrets the Worker lacks, uploaded with the deploy (never replacing an existing one).
let existing = [];
if (!planOnly) {
  const listed = spawnSync("npx", ["wrangler", "secret", "list", "--env", env, "--format", "json"], {
    encoding: "utf8",
  });
  if (listed.status === 0) existing = JSON.parse(listed.stdout).map((s) => s.name);
}
const fresh = Object.fromEntries(
  Object.entries(SECRETS)
    .filter(([name]) => !existing.includes(name))
    .map(([name, make]) => [name, planOnly ? "<generated>" : make()]),
);
const dir = mkdtempSync(join(tmpdir(), "fd-secrets-"));
const secretsFile = join(dir, "secrets.json");
writeFileSync(secretsFile, JSON.stringify(fresh), { mode: 0o600 });
try {
  wrangler([
    "deploy",
    "--env",
    env,
    "--upload-source-maps",
    ...(Object.keys(fresh).length ? ["--secrets-file", secretsFile] : []),
  ]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  Object.keys(fresh).length
    ? `\nNew secrets set: ${Object.keys(fresh).join(", ")}.`
    : "\nEvery secret was already set; none changed.",
);
if (fresh.BOOTSTRAP_TOKEN) {
  console.log(
    [
      "",
      "Create the first admin now (one time; shown only here):",
      `  BOOTSTRAP_TOKEN=${fresh.BOOTSTRAP_TOKEN} npm run create-admin -- --url <the Worker's URL> --email <you> --name <account name>`,
      `then: npx wrangler secret delete BOOTSTRAP_TOKEN --env ${env}`,
    ].join("\n"),
  );
}
