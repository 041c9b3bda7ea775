import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

// Migrations are idempotent (tracked in d1_migrations), so every test file can apply them.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
