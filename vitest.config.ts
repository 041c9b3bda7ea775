import { resolve } from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { unstable_readConfig } from "wrangler";
import { copyStaticAssets, ensureWebApps } from "./scripts/static-assets.mjs";
import { TWILIO_TEST_AUTH_TOKEN } from "./test/providers/server.mjs";

// Tests run inside workerd against the real local bindings declared in wrangler.jsonc
// (D1, R2, Durable Objects, Queues). Secrets that `npm run dev` keeps in .dev.vars are
// fixed test values here, so a fresh clone can run the suite without any setup.
/** Test files that need a deployment of their own (see `projects` below). */
const ISOLATED = [
  "test/openapi/walk.test.ts",
  "test/db/shards.test.ts",
  "test/db/account-moves.test.ts",
  "test/tasks/query-plan.test.ts",
  "test/webhooks/delivery.test.ts",
  "test/webhooks/shared-payloads.test.ts",
];

export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  const staticWorker = unstable_readConfig({ config: "static/wrangler.jsonc" });
  // The /docs/ page's Swagger UI files and the PDFs' fonts (the static Worker's build command does this for dev and deploy).
  copyStaticAssets();
  await ensureWebApps();
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.jsonc" },
        miniflare: {
          // The assets-only Worker (static/wrangler.jsonc) the ASSETS service binding reaches:
          // the /docs/ page's files and the PDFs' fonts, served as Workers Static Assets.
          workers: [
            {
              name: staticWorker.name,
              modules: true,
              script: "export default {}",
              compatibilityDate: staticWorker.compatibility_date,
              assets: {
                directory: resolve("static", staticWorker.assets!.directory),
                routerConfig: { has_user_worker: false },
                assetConfig: {
                  html_handling: staticWorker.assets!.html_handling,
                  not_found_handling: staticWorker.assets!.not_found_handling,
                },
              },
            },
          ],
          d1Databases: ["EMPTY_DB"],
          bindings: {
            TEST_MIGRATIONS: migrations,
            ALLOW_SIGNUP: "true",
            // The two account shards of wrangler.jsonc (contract §24): sign-ups go to the one with
            // the most room, so the suites put accounts on both.
            SHARDS: "SHARD_0,SHARD_1",
            // Every answer says its sequential D1 round trips (test/db/sessions.test.ts counts them).
            EXPOSE_D1_ROUND_TRIPS: "true",
            // Suites fire many requests per token; the limiter's own test sets 20/s explicitly.
            RATE_LIMIT_PER_SECOND: "100000",
            WEBHOOKS_ALLOW_PRIVATE: "false",
            // What `npm run dev` writes to .dev.vars (which wrangler reads here too) must not
            // change what the tests see: the deployed default, no browser origin allowed.
            CORS_ORIGINS: "",
            // No basemap: the console's page as a clone serves it (a .dev.vars may set one).
            MAP_STYLE_URL: "",
            JWT_SECRETS:
              "test-2:dGVzdC1rZXktdHdvLXRlc3Qta2V5LXR3by10ZXN0LWtleQ,test-1:dGVzdC1rZXktb25lLXRlc3Qta2V5LW9uZS10ZXN0LWtleQ",
            STORAGE_ACCESS_KEY_ID: "AKIATESTKEY0000000001",
            STORAGE_SECRET_ACCESS_KEY: "test-secret-access-key-0000000000000000000",
            DEMO_ADMIN_PASSWORD: "demo-admin-password",
            // Signs the SMS provider's status callbacks in the tests (never a real token); the
            // local Twilio stand-in of test/providers/server.mjs signs with the same.
            TWILIO_AUTH_TOKEN: TWILIO_TEST_AUTH_TOKEN,
            // Two keys: the first encrypts, both decrypt (the rotation the README describes).
            WEBHOOK_SECRETS_KEYS:
              "whk-2:dGVzdC13ZWJob29rLWtleS10d28tLS0tLS0tLS0tLS0,whk-1:dGVzdC13ZWJob29rLWtleS1vbmUtLS0tLS0tLS0tLS0",
          },
        },
      }),
    ],
    test: {
      // Per-file isolation (a fresh runtime and fresh local D1/R2/DO storage per file) cost
      // ~25 s of setup per file, most of the suite's time. Each test mints its own account, so
      // the files share one runtime and storage (`shared`); the few that need a deployment of
      // their own keep it (`isolated`): the first-admin walk needs an empty deployment, shard
      // placement by size needs shards of like size, the queue-consumer and query-plan checks
      // read the whole database.
      // (A project's `include` is added to the root's, so the root names none.)
      projects: [
        {
          extends: true as const,
          test: {
            name: "shared",
            isolate: false,
            include: ["test/**/*.test.ts", "src/**/*.test.ts"],
            exclude: ISOLATED,
          },
        },
        { extends: true as const, test: { name: "isolated", include: ISOLATED } },
      ],
      setupFiles: ["./test/setup.ts"],
      // Local HTTP servers speaking Nominatim's, OSRM's and Twilio's APIs (test/providers/).
      globalSetup: ["./test/providers/server.mjs"],
      // The service's info log lines (one per request, queue batch and cron run) would drown
      // the report; tests that check them spy on console.log. Errors still print.
      onConsoleLog: (log: string) => !log.startsWith('{"level":"info"'),
      testTimeout: 30_000,
      hookTimeout: 30_000,
    },
  };
});
