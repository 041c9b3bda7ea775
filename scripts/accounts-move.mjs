#!/usr/bin/env node
// `npm run accounts:move -- <account id> <shard> [--env <name>] [--url <local service>]`
//
// Moves an account to another shard (contract §24, src/services/accounts/move.ts). This script
// asks (a row in the directory's `account_moves`, written with the operator's own wrangler
// credentials: no API or secret opens it) and reports; the Worker's cron does the work, a step at
// a time: copy, verify (rows and a SHA-256 per table), switch the directory's entry, delete the
// source. The account's writes answer 503 with Retry-After meanwhile; nobody else notices.
//
// Without --env: the local service of `npm run dev` (its D1 files; the script runs the cron
// through wrangler dev's /__scheduled, since a local cron does not fire by itself). With --env
// staging|production: that deployment's databases (`--remote`); its cron runs every minute.
import { spawnSync } from "node:child_process";
import { unstable_readConfig } from "wrangler";

const args = process.argv.slice(2);
function option(name) {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const [, value] = args.splice(i, 2);
  return value;
}
const envName = option("--env");
const url = option("--url") ?? `http://localhost:${process.env.PORT || 8787}`;
const [accountId, shard] = args;
const usage = "usage: npm run accounts:move -- <account id> <shard, e.g. SHARD_1> [--env staging|production]";
if (!accountId || !shard) fail(usage);
// Both go into SQL text (wrangler d1 execute takes no parameters): only these shapes pass.
if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(accountId))
  fail(`"${accountId}" is not an account id (a UUID, as GET /accounts/ shows it).`);
const config = unstable_readConfig({ config: "wrangler.jsonc", env: envName });
const shards = String(config.vars?.SHARDS ?? "")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);
if (!shards.includes(shard))
  fail(
    `"${shard}" is not a shard of ${envName ?? "local development"} (SHARDS: ${shards.join(", ") || "none"}).`,
  );

const where = envName ? ["--remote", "--env", envName] : ["--local"];
function sql(command) {
  const r = spawnSync("npx", ["wrangler", "d1", "execute", "DB", ...where, "--json", "--command", command], {
    encoding: "utf8",
    env: { ...process.env, CI: "true" },
  });
  if (r.status !== 0) fail(`wrangler d1 execute failed:\n${r.stderr || r.stdout}`);
  const out = JSON.parse(r.stdout);
  return out[0]?.results ?? [];
}

const [account] = sql(`SELECT id, name, shard FROM accounts WHERE id = '${accountId}'`);
if (!account) fail(`No account ${accountId} in the directory.`);
if ((account.shard ?? "DB") === shard) fail(`Account ${accountId} already lives in ${shard}.`);
const [running] = sql(
  `SELECT phase FROM account_moves WHERE account_id = '${accountId}' AND phase NOT IN ('done', 'failed')`,
);
if (running) console.log(`A move of this account is already under way (${running.phase}): following it.`);
else {
  const now = Date.now();
  sql(`INSERT INTO account_moves (account_id, target, phase, requested_at, updated_at)
  VALUES ('${accountId}', '${shard}', 'requested', ${now}, ${now})
  ON CONFLICT (account_id) DO UPDATE SET target = excluded.target, phase = 'requested',
    attempts = 0, detail = NULL, requested_at = excluded.requested_at, updated_at = excluded.updated_at
  WHERE account_moves.phase IN ('done', 'failed')`);
  console.log(`Moving "${account.name}" (${accountId}) from ${account.shard ?? "DB"} to ${shard}.`);
}

const started = Date.now();
let last = "";
for (;;) {
  if (!envName) {
    // The local cron, on demand (wrangler dev --test-scheduled, which `npm run dev` passes).
    const r = await fetch(`${url}/__scheduled?cron=*+*+*+*+*`).catch(() => null);
    if (!r?.ok)
      fail(
        `The local service at ${url} did not run its cron: is \`npm run dev\` running? (--url to point elsewhere)`,
      );
  }
  const [m] = sql(
    `SELECT phase, table_index, rows_copied, rows_deleted, attempts, detail FROM account_moves WHERE account_id = '${accountId}'`,
  );
  const detail = m.detail ? JSON.parse(m.detail) : {};
  const line = `${m.phase}: ${m.rows_copied} rows copied, ${m.rows_deleted} deleted${m.attempts ? `, ${m.attempts} failed steps (last: ${detail.error})` : ""}`;
  if (line !== last) console.log(`${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s  ${line}`);
  last = line;
  if (m.phase === "done") {
    const tables = Object.entries(detail.tables ?? {}).filter(([, t]) => t.rows > 0);
    console.log(
      `Verified before the switch (rows, SHA-256): ${tables.map(([n, t]) => `${n} ${t.rows} ${t.sha256.slice(0, 12)}`).join("; ")}`,
    );
    console.log(`Done: account ${accountId} lives in ${shard}.`);
    process.exit(0);
  }
  if (m.phase === "failed")
    fail(`The move failed and was given up; the account is whole where it was. ${detail.error ?? ""}`);
  if (Date.now() - started > 30 * 60_000)
    fail("Still under way after 30 minutes; run the command again to follow it.");
  await new Promise((r) => setTimeout(r, envName ? 10_000 : 2_000));
}

function fail(message) {
  console.error(message);
  process.exit(1);
}
