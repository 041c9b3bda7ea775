// The service's OpenAPI document, read from its own `GET /openapi.json` without a network: the
// Worker runs locally on workerd through wrangler's startWorker, with the local bindings of
// wrangler.jsonc, so the document is exactly what a deployment serves (its `servers` names the
// placeholder origin asked for). Shared by `npm run lint:openapi` and `npm run client:generate`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unstable_startWorker } from "wrangler";

export const DOCUMENT_ORIGIN = "https://field-dispatch.example.org";

export async function fetchDocument() {
  // A registry of its own: the ASSETS service binding (the static files' Worker, not needed for
  // the document) then resolves to nothing running instead of failing the start.
  const registry = mkdtempSync(join(tmpdir(), "fd-openapi-registry-"));
  const worker = await unstable_startWorker({
    config: "wrangler.jsonc",
    dev: {
      server: { hostname: "127.0.0.1", port: 0 },
      inspector: false,
      watch: false,
      logLevel: "warn",
      registry,
    },
  });
  try {
    await worker.ready;
    const res = await worker.fetch(`${DOCUMENT_ORIGIN}/openapi.json`);
    if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}: ${await res.text()}`);
    return await res.json();
  } finally {
    await worker.dispose();
    rmSync(registry, { recursive: true, force: true });
  }
}
