#!/usr/bin/env node
// CI: the deployable bundle stays within its budget, and the Worker's start-up stays far under
// the platform's limit. Prints both figures.
//   BUNDLE_BUDGET_KIB (default 2560): gzip size `wrangler deploy --dry-run` reports. Workers
//     Free accepts 3 MiB compressed and Paid 10 MiB; the budget stays under Free's limit with
//     room for the rest of Part two, while catching an accidental heavy import. Today's largest
//     parts: @cantoo/pdf-lib (~340 KiB gzipped: the route report's PDF, later proofs of delivery), the offline
//     gazetteer (~1.3 MiB before compression, src/services/addresses/geocoding/data), zod with its
//     locale files (zod's `z` namespace re-exports every locale, so the bundler keeps them),
//     the photon image library (WebAssembly, a separate module).
//   STARTUP_BUDGET_MS (default 200): the target for the CPU time of the global scope in
//     `wrangler check startup`, printed with the figure; STARTUP_LIMIT_MS (default 500, half the
//     platform's 1 s, past which it refuses a Worker) fails the check. The figure is a profile's
//     wall-clock samples on a shared machine: the same commit measured 202-245 ms here at
//     different hours (least of three), so the target is reported, not gated (the bench's rule:
//     figures are printed, never asserted as times); a heavy import still fails at the limit.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const bundleBudget = Number(process.env.BUNDLE_BUDGET_KIB ?? 2560);
const startupBudget = Number(process.env.STARTUP_BUDGET_MS ?? 200);
const startupLimit = Number(process.env.STARTUP_LIMIT_MS ?? 500);
const dir = mkdtempSync(join(tmpdir(), "fd-bundle-"));
let failed = false;
try {
  const dry = spawnSync("npx", ["wrangler", "deploy", "--dry-run", "--env", "production", "--outdir", dir], {
    encoding: "utf8",
  });
  const out = `${dry.stdout}${dry.stderr}`;
  const m = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(out);
  if (dry.status !== 0 || !m) {
    process.stderr.write(out);
    console.error("wrangler deploy --dry-run failed");
    process.exit(1);
  }
  const gzip = Number(m[2]);
  const ok = gzip <= bundleBudget;
  failed ||= !ok;
  console.log(
    `bundle: ${Number(m[1]).toFixed(0)} KiB, ${gzip.toFixed(0)} KiB gzipped (budget ${bundleBudget} KiB) ${ok ? "ok" : "OVER BUDGET"}`,
  );

  // The profile's samples are timed by the wall clock, so a busy machine (CI shares two cores)
  // only ever adds to the figure: the least of up to three runs is the Worker's own.
  const runs = [];
  for (let i = 0; i < 3 && !(runs.length && Math.min(...runs) <= startupBudget); i++) runs.push(startupMs(i));
  const ms = Math.min(...runs);
  const startOk = ms <= startupLimit;
  failed ||= !startOk;
  const verdict = !startOk ? "OVER THE LIMIT" : ms <= startupBudget ? "ok" : "ok (over the target)";
  console.log(
    `start-up: ${ms.toFixed(0)} ms CPU (target ${startupBudget} ms, limit ${startupLimit} ms, platform 1000 ms; ${runs.length > 1 ? `least of ${runs.map((r) => r.toFixed(0)).join(", ")}` : "one run"}) ${verdict}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

/** CPU time of the Worker's global scope in one `wrangler check startup`, in ms. */
function startupMs(i) {
  const profile = join(dir, `startup-${i}.cpuprofile`);
  const check = spawnSync("npx", ["wrangler", "check", "startup", "--outfile", profile], {
    encoding: "utf8",
  });
  if (check.status !== 0) {
    process.stderr.write(`${check.stdout}${check.stderr}`);
    console.error("wrangler check startup failed");
    process.exit(1);
  }
  // A V8 CPU profile: samples at a fixed interval; the ones in "(idle)" are not start-up work.
  const p = JSON.parse(readFileSync(profile, "utf8"));
  const idleIds = new Set(p.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  let busyUs = 0;
  for (let k = 0; k < p.samples.length; k++) if (!idleIds.has(p.samples[k])) busyUs += p.timeDeltas[k] ?? 0;
  return busyUs / 1000;
}
