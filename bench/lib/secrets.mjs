// Secrets for the bench's server, made fresh by every run and never read from a file of the
// clone (a fresh clone has no .dev.vars, and a developer's own must not change what is
// measured). The list of what the Worker requires is read from src/env.d.ts (the members of
// `AppSecrets` without `?`), so a secret added there without a generator here stops the bench
// at its start instead of answering 500 somewhere in the middle of a run.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";

const b64url = (n) => randomBytes(n).toString("base64url");

/** How each secret is made (the formats are those src/env.d.ts documents). */
const GENERATORS = {
  // `kid:base64url`, at least 256 bits (services/auth/jwt.ts).
  JWT_SECRETS: () => `bench-${b64url(3)}:${b64url(32)}`,
  // The storage endpoint's SigV4 credentials (src/s3): an AWS-shaped key id and a secret.
  STORAGE_ACCESS_KEY_ID: () => `AKBENCH${randomBytes(7).toString("hex").toUpperCase()}`,
  STORAGE_SECRET_ACCESS_KEY: () => b64url(30),
  // `kid:base64`, exactly 32 bytes: the AES-GCM key of webhook secrets at rest.
  WEBHOOK_SECRETS_KEYS: () => `bench-${b64url(3)}:${b64url(32)}`,
};

/** The names of the secrets the Worker requires (non-optional members of `AppSecrets`). */
export function requiredSecrets(envTypes = "src/env.d.ts") {
  const text = readFileSync(envTypes, "utf8");
  const body = /interface AppSecrets\s*\{([\s\S]*?)\n\}/.exec(text)?.[1];
  if (!body) throw new Error(`bench: no AppSecrets interface in ${envTypes}`);
  return [...body.matchAll(/^\s*([A-Z][A-Z0-9_]*)\s*:/gm)].map((m) => m[1]);
}

/** A fresh value for every required secret; throws naming any the bench cannot make. */
export function freshSecrets(envTypes) {
  const names = requiredSecrets(envTypes);
  const missing = names.filter((n) => !GENERATORS[n]);
  if (missing.length)
    throw new Error(
      `bench: no generator for the required secret(s) ${missing.join(", ")} (bench/lib/secrets.mjs)`,
    );
  return Object.fromEntries(names.map((n) => [n, GENERATORS[n]()]));
}

/** `KEY=value` lines for wrangler's `--env-file` (values here never need quoting). */
export const envFileText = (vars) =>
  `${Object.entries(vars)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n")}\n`;
