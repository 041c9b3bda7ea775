import { createDispatchClient, type DispatchClient, type Schemas } from "../../clients/typescript/index";
import { pacerFor } from "./pace";

export type { DispatchClient, Schemas };
export type Task = Schemas["Task"];
export type User = Schemas["User"];

/** The API's error bodies (contract §3): field errors, or `detail`. */
export type ApiErrorBody = { detail?: string; non_field_errors?: string[]; [field: string]: unknown };

/** The first human message of an error body, for a status line. */
export function errorMessage(body: unknown, fallback: string): string {
  if (!body || typeof body !== "object") return fallback;
  const b = body as ApiErrorBody;
  if (typeof b.detail === "string") return b.detail;
  for (const v of Object.values(b)) {
    if (Array.isArray(v) && typeof v[0] === "string") return v[0];
    if (v && typeof v === "object") {
      const inner = errorMessage(v, "");
      if (inner) return inner;
    }
  }
  return fallback;
}

/**
 * The typed client (clients/typescript) on this origin with the session's token; every answer
 * in the account's time zone (`Accept-Timezone`, contract §1), and a 401 reported once so the
 * app returns to sign-in with the reason (contract §26). Its requests are paced to stay under the
 * token's rate limit, writes first (pace.ts).
 */
export function apiClient(
  token: string | null,
  opts: { zone?: string; onUnauthorized?: (why: string) => void } = {},
) {
  const client = createDispatchClient({
    baseUrl: location.origin,
    token: token ?? undefined,
    fetch: pacerFor(token).fetch,
  });
  client.use({
    onRequest({ request }) {
      if (opts.zone) request.headers.set("Accept-Timezone", opts.zone);
      return request;
    },
    async onResponse({ response }) {
      if (response.status === 401 && token && opts.onUnauthorized) {
        const body = await response
          .clone()
          .json()
          .catch(() => null);
        opts.onUnauthorized(errorMessage(body, ""));
      }
      return response;
    },
  });
  return client;
}

/** The id at the end of a resource URL (`…/<collection>/<id>/`). */
export const idOf = (url: string) => url.replace(/\/$/, "").split("/").pop() ?? "";

/** Follows `next` links of a list (contract §4) and returns every item. */
export async function listAll<T>(
  first: () => Promise<{ data?: { results: T[]; next: string | null }; error?: unknown }>,
  client: DispatchClient,
): Promise<T[]> {
  const page = await first();
  if (!page.data) throw new Error(errorMessage(page.error, "Request failed"));
  const out = [...page.data.results];
  let next = page.data.next;
  while (next) {
    // A cursor URL is opaque (contract §4): fetched as given, through the same client's
    // middleware (token, time zone) by its path and query.
    const u = new URL(next);
    const r = await client.GET(u.pathname as "/tasks/", {
      params: { query: Object.fromEntries(u.searchParams) as never },
    });
    const data = r.data as unknown as { results: T[]; next: string | null } | undefined;
    if (!data) throw new Error(errorMessage(r.error, "Request failed"));
    out.push(...data.results);
    next = data.next;
  }
  return out;
}
