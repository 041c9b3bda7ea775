#!/usr/bin/env node
// `npm run test:browser`: one dev server (the README's command) for the three browser scripts,
// run one after the other against it (BROWSER_TEST_BASE), so CI pays one start-up, not three.
// Each script mints its own account, so none sees another's data. A script also runs alone
// (`node test/browser/field.mjs`), starting its own server.
import { spawnSync } from "node:child_process";
import { service } from "./harness.mjs";

const svc = service(Number(process.env.BROWSER_TEST_PORT || 8797), "browser");
let failed = 0;
try {
  await svc.ready();
  for (const script of ["tracker.mjs", "console.mjs", "field.mjs", "field-duty.mjs", "field-shared.mjs"]) {
    const r = spawnSync("node", [`test/browser/${script}`], {
      stdio: "inherit",
      env: { ...process.env, BROWSER_TEST_BASE: svc.base },
    });
    if (r.status !== 0) {
      console.error(`[browser] ${script} failed (exit ${r.status ?? r.signal})`);
      failed++;
    }
  }
} finally {
  svc.stop();
}
process.exit(failed ? 1 : 0);
