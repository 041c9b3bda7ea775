import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

// Migrations are idempotent (tracked in d1_migrations), so every test file can apply them: to
// the directory and to every account shard, which carry the same schema (src/db/shards.ts).
for (const db of [env.DB, env.SHARD_0, env.SHARD_1]) if (db) await applyD1Migrations(db, env.TEST_MIGRATIONS);
