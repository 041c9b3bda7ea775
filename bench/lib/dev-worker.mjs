#!/usr/bin/env node
// One Worker on the local runtime for the bench: what `wrangler dev` runs, through wrangler's
// own programmatic API so that its options can be set, the devtools inspector above all.
// `wrangler dev` always attaches a devtools session to the runtime (it prints console output
// through it), and with a session attached every console.log is captured with its stack and
// sent over the devtools protocol: about 1.5 ms of runtime CPU per call on the bench machine
// (bench/README.md). Production has no such session, so by default the bench runs without it;
// BENCH_INSPECTOR=1 attaches one as `wrangler dev` does.
// usage: dev-worker.mjs <config> <port> <persist dir> <env file> [--test-scheduled]
// X_LOCAL_OBSERVABILITY is read by wrangler when it builds the runtime's configuration: set
// before wrangler is loaded. The local trace collector receives every span (each D1 query, each
// Durable Object call, each console.log) from the runtime, in the same process.
if (process.env.BENCH_LOCAL_OBSERVABILITY !== "1") process.env.X_LOCAL_OBSERVABILITY = "false";
const { unstable_startWorker } = await import("wrangler");

const [config, port, persist, envFile, ...flags] = process.argv.slice(2);
const worker = await unstable_startWorker({
  config,
  envFiles: [envFile],
  dev: {
    server: { hostname: "127.0.0.1", port: Number(port) },
    inspector:
      process.env.BENCH_INSPECTOR === "1"
        ? { hostname: "127.0.0.1", port: Number(process.env.BENCH_INSPECTOR_PORT || 0) }
        : false,
    persist,
    // Workers started apart (the service and its static files' Worker, static/wrangler.jsonc) reach
    // each other's service bindings through one registry directory per bench run.
    ...(process.env.DEV_REGISTRY ? { registry: process.env.DEV_REGISTRY } : {}),
    logLevel: "error",
    watch: false,
    testScheduled: flags.includes("--test-scheduled"),
  },
});
await worker.ready;
const stop = async () => {
  await worker.dispose().catch(() => undefined);
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
