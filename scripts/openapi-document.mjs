#!/usr/bin/env node
// Writes the service's OpenAPI document to a file (default: .wrangler/openapi.json) without a
// network: the Worker runs locally on workerd through wrangler's startWorker, with the local
// bindings of wrangler.jsonc, and the document is read from its own `GET /openapi.json`, the
// very handler a deployment serves (its `servers` then names the placeholder origin asked for).
// `npm run lint:openapi` then lints that file with Redocly.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { unstable_startWorker } from "wrangler";

const out = process.argv[2] ?? ".wrangler/openapi.json";
const worker = await unstable_startWorker({
  config: "wrangler.jsonc",
  dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, watch: false, logLevel: "warn" },
});
try {
  await worker.ready;
  const res = await worker.fetch("https://field-dispatch.example.org/openapi.json");
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}: ${await res.text()}`);
  const doc = await res.json();
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
  console.log(`OpenAPI document written to ${out}`);
} finally {
  await worker.dispose();
}
