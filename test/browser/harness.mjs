// What the browser tests share (`npm run test:browser`): the service they drive, Debian's
// Chromium through playwright-core (Playwright's own browser download cannot be fetched here),
// the axe-core gate and the way a test script ends.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import AxeBuilder from "@axe-core/playwright";
import { chromium } from "playwright-core";
import { apiClient } from "../../bench/lib/harness.mjs";

/**
 * The service under test. With BROWSER_TEST_BASE (all.mjs starts one server for every script,
 * or a dev server is already running while working on a page), that one; else the README's dev
 * command on `port`, stopped by `stop()`. `api` waits out a 429 (the dev server keeps the
 * deployed rate limit) and sends the request again.
 */
export function service(port, name) {
  const external = process.env.BROWSER_TEST_BASE;
  const base = external || `http://127.0.0.1:${port}`;
  let serverLog = "";
  const server = external
    ? null
    : spawn("node", ["scripts/dev.mjs", "--port", String(port), "--ip", "127.0.0.1"], {
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
        env: { ...process.env, CI: "true" },
      });
  server?.stdout.on("data", (d) => (serverLog += d));
  server?.stderr.on("data", (d) => (serverLog += d));
  return {
    base,
    api: apiClient(base, { retries429: 5 }),
    log: (...a) => console.log(`[${name}]`, ...a),
    /** Resolves once /health/ answers. */
    async ready(ms = 180_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        try {
          if ((await fetch(`${base}/health/`)).ok) return;
        } catch {}
        if (Date.now() > deadline)
          throw new Error(`the dev server did not start:\n${serverLog.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    },
    stop() {
      try {
        if (server) process.kill(-server.pid, "SIGTERM");
      } catch {}
    },
  };
}

/** Chromium with nothing of its own that reaches the network (the pages must not either). */
export const launch = () =>
  chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });

/** Fails on any serious or critical axe-core violation of the page as it is now. */
export async function axe(page, screen, log = () => {}) {
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(
    bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
    [],
    `axe on ${screen}`,
  );
  log(`axe ${screen}: ${result.violations.length} minor/moderate, 0 serious or critical`);
}

/** Runs a test script's `main`, stops its server, exits 0 or 1. */
export function run(main, svc) {
  main()
    .then(() => {
      svc.stop();
      process.exit(0);
    })
    .catch((err) => {
      console.error(err);
      svc.stop();
      process.exit(1);
    });
}
