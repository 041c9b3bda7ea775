/**
 * A typed client of the service: openapi-fetch over the types openapi-typescript generates from
 * /openapi.json (./schema.d.ts, `npm run client:generate`). Paths, parameters, bodies and answers
 * are typed from the document alone, so a program written against it needs no casts.
 */
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

export type { components, paths };
export type Schemas = components["schemas"];

export function createDispatchClient(options: {
  baseUrl: string;
  token?: string;
  /** Another fetch (a test's, a proxy's). */
  fetch?: (request: Request) => Promise<Response>;
}) {
  return createClient<paths>({
    baseUrl: options.baseUrl,
    fetch: options.fetch,
    headers: options.token ? { Authorization: `Bearer ${options.token}` } : {},
  });
}

export type DispatchClient = ReturnType<typeof createDispatchClient>;
