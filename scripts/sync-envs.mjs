#!/usr/bin/env node
// `npm run config:envs`: rewrites the `env` section of wrangler.jsonc from the top level, so the
// deployed environments declare every var, binding and queue consumer local development has
// (wrangler inherits none of these). Kept per environment: its Worker, database, bucket, queue
// and static Worker names, its database ids, and the vars listed in KEEP (set them in the file).
import { readFileSync, writeFileSync } from "node:fs";
import { unstable_readConfig } from "wrangler";

const CONFIG = "wrangler.jsonc";
const KEEP = [
  "PUBLIC_BASE_URL",
  "CORS_ORIGINS",
  "EMAIL_PROVIDER",
  "EMAIL_FROM",
  "SMS_PROVIDER",
  "SMS_FROM",
  "MAP_STYLE_URL",
];
const top = unstable_readConfig({ config: CONFIG });
const ENVS = {
  staging: {
    worker: "field-dispatch-staging",
    suffix: "-staging",
    db: "field-dispatch-staging",
    bucket: "field-dispatch-files-staging",
  },
  production: { worker: "field-dispatch", suffix: "", db: "field-dispatch", bucket: "field-dispatch-files" },
};

const out = {};
for (const [name, e] of Object.entries(ENVS)) {
  let current = null;
  try {
    current = unstable_readConfig({ config: CONFIG, env: name });
  } catch {}
  const kept = Object.fromEntries(
    KEEP.filter((k) => current?.vars?.[k] !== undefined).map((k) => [k, current.vars[k]]),
  );
  const q = (queue) => queue && `${queue}${e.suffix}`;
  // The directory (DB) is named as the environment's database; each shard after it, with its
  // number. Ids written by `npm run deploy` stay.
  const d1 = top.d1_databases.map((d) => ({
    ...d,
    database_name: d.binding === "DB" ? e.db : `${e.db}-${d.binding.toLowerCase().replace("_", "-")}`,
    database_id: current?.d1_databases?.find((c) => c.binding === d.binding)?.database_id ?? d.database_id,
  }));
  out[name] = {
    name: e.worker,
    vars: { ...top.vars, QUEUE_SUFFIX: e.suffix, STORAGE_BUCKET: e.bucket, ...kept },
    d1_databases: d1,
    r2_buckets: [{ binding: top.r2_buckets[0].binding, bucket_name: e.bucket }],
    durable_objects: { bindings: top.durable_objects.bindings },
    ...(top.send_email?.length ? { send_email: top.send_email } : {}),
    // The assets-only Worker of static/wrangler.jsonc, one per environment (npm run deploy names it).
    services: (top.services ?? []).map((b) => ({ ...b, service: `${b.service}${e.suffix}` })),
    queues: {
      producers: top.queues.producers.map((p) => ({ ...p, queue: q(p.queue) })),
      consumers: top.queues.consumers.map((c) => {
        const r = { ...c, queue: q(c.queue) };
        if (c.dead_letter_queue) r.dead_letter_queue = q(c.dead_letter_queue);
        return r;
      }),
    },
  };
}

const text = readFileSync(CONFIG, "utf8");
const at = text.indexOf('"env":');
if (at < 0) throw new Error(`${CONFIG}: no "env" section`);
const body = JSON.stringify(out, null, 2).replace(/\n/g, "\n  ");
writeFileSync(CONFIG, `${text.slice(0, at)}"env": ${body}\n}\n`);
console.log(`${CONFIG}: env.staging and env.production rewritten from the top level`);
