// What test/providers/server.mjs (vitest's global setup) provides to the tests.
export {};

declare module "vitest" {
  export interface ProvidedContext {
    providers: { url: string };
  }
}
