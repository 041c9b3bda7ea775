import { getPath } from "hono/utils/url";
import { createApiApp } from "./apps/api";
import { createDocsApp } from "./apps/docs";
import { createStorageApp } from "./apps/storage";
import type { AppEnv } from "./http/context";
import { isDocsPath, isStoragePath } from "./http/urls";
import { createPublicApp, PUBLIC_PREFIX } from "./public";

/**
 * The Worker's HTTP surface: sub-apps with a middleware chain each, chosen by path before any
 * middleware runs, so no middleware keeps a list of paths it skips:
 * - the versioned JSON API (authentication, versions, the trailing-slash rule, rate limits,
 *   JSON body checks, the webhook relay);
 * - storage: S3's POST Object endpoint and the stored files (no token: the signed form or the
 *   key is the authorization);
 * - docs: the OpenAPI document and the page that renders it (anonymous, any origin);
 * - the recipients' public pages (src/public: `/t/<token>/`, no token, a strict CSP).
 */
export function createApp() {
  const api = createApiApp();
  const storage = createStorageApp();
  const pages = createPublicApp();
  const docs = createDocsApp([api, storage, pages]);
  const appFor = (request: Request) => {
    const path = getPath(request);
    if (path.startsWith(`${PUBLIC_PREFIX}/`)) return pages;
    return isStoragePath(path) ? storage : isDocsPath(path) ? docs : api;
  };
  type FetchArgs = Parameters<typeof api.fetch>;
  const fetch = (request: Request, env?: FetchArgs[1], ctx?: FetchArgs[2]) =>
    appFor(request).fetch(request, env, ctx);
  return {
    fetch,
    /** Hono's `app.request()` for tests: a path or URL, RequestInit, then env and ctx. */
    request(input: string | URL | Request, init?: RequestInit, env?: FetchArgs[1], ctx?: FetchArgs[2]) {
      const request =
        input instanceof Request
          ? new Request(input, init)
          : new Request(new URL(String(input), "http://localhost"), init);
      return fetch(request, env, ctx);
    },
    api,
    storage,
    docs,
    pages,
  };
}

export type App = ReturnType<typeof createApp>;
export type { AppEnv };
