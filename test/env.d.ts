declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("@cloudflare/vitest-plugin").D1Migration[];
    /** An empty database of its own, for what only happens on a fresh deployment (bootstrap). */
    EMPTY_DB: D1Database;
  }
}

// Vite's `?raw` imports (the Solomon fixtures of test/solver): the file's text.
declare module "*?raw" {
  const text: string;
  export default text;
}
