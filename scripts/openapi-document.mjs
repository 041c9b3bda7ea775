#!/usr/bin/env node
// Writes the service's OpenAPI document to a file (default: .wrangler/openapi.json), read from
// the Worker itself (scripts/openapi-source.mjs). `npm run lint:openapi` then lints that file
// with Redocly.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fetchDocument } from "./openapi-source.mjs";

const out = process.argv[2] ?? ".wrangler/openapi.json";
const doc = await fetchDocument();
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
console.log(`OpenAPI document written to ${out}`);
