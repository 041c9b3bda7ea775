import { getPath } from "hono/utils/url";
import { methodNotAllowedOr404 } from "../apps/fallback";
import { notFound, renderError } from "../http/errors";
import { anonymousCaller, publicCors, rateLimit, requestContext } from "../http/middleware";
import { createRouter } from "../http/openapi";
import { renderTrackerHtml } from "../render/tracker";
import { publicTracker } from "../services/trackers/public";

export const PUBLIC_PREFIX = "/t";

/**
 * The public page's policy (CSP Level 3): nothing but this page's own inline styles, and the
 * empty `data:` icon it names (so no browser asks for /favicon.ico and logs a 404).
 */
const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Recipients' pages (contract §17) as a sub-app of their own: no token, no API versions, any
 * origin, rate limited per client address, a strict CSP. `GET /t/<token>/`: JSON with
 * `Accept: application/json`, else the HTML page.
 */
export function createPublicApp() {
  const app = createRouter();
  app.onError((err, c) => renderError(err, c));
  app.notFound((c) => renderError(notFound(), c));
  app.use("*", requestContext);
  app.use("*", publicCors);
  app.use("*", anonymousCaller);
  app.use("*", rateLimit);
  app.get(`${PUBLIC_PREFIX}/:token/`, async (c) => {
    const token = c.req.param("token");
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(token)) throw notFound();
    const view = await publicTracker(c.env, token, c.req.header("Accept-Language"));
    const wantsJson =
      /\bapplication\/json\b/i.test(c.req.header("Accept") ?? "") &&
      !/\btext\/html\b/i.test(c.req.header("Accept") ?? "");
    const headers = {
      "Content-Language": view.language,
      Vary: "Accept, Accept-Language",
      "Cache-Control": "no-store",
    };
    if (wantsJson) return c.json({ tasks: view.tasks.map((t) => t.fields) }, 200, headers);
    return c.body(renderTrackerHtml(view), 200, {
      ...headers,
      "Content-Type": "text/html; charset=utf-8",
      "Content-Security-Policy": PAGE_CSP,
      "Referrer-Policy": "no-referrer",
    });
  });
  // `/t/<token>` without its slash is 404, as every unknown path (the API's slash rule).
  methodNotAllowedOr404(app, getPath);
  return app;
}
