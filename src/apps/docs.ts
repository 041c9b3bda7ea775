import { createRoute, z } from "@hono/zod-openapi";
import { getPath } from "hono/utils/url";
import { mapStyleProblem } from "../domain/map-style";
import { notFound, renderError } from "../http/errors";
import { anonymousCaller, publicCors, rateLimit, requestContext } from "../http/middleware";
import { createRouter, type Router } from "../http/openapi";
import { finishDocument } from "../http/openapi-document";
import { CONSOLE_PREFIX, DOCS_PREFIX, FIELD_APP_PREFIX, OPENAPI_PATH } from "../http/urls";
import { CURRENT_VERSION } from "../http/versions";
import { methodNotAllowedOr404 } from "./fallback";

/**
 * The docs page's Content-Security-Policy (CSP Level 3): scripts, styles and everything else from
 * this origin only, no inline script (Swagger UI starts from docs/init.js), data: images (Swagger
 * UI's CSS icons), and never framed (`frame-ancestors 'none'`).
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * The console's CSP: as the docs page's, plus the event stream's WebSocket on this origin
 * (`'self'` covers ws: only in CSP Level 3 browsers, so the scheme is named too), blob: images,
 * and no inline style either: the app sets styles through the CSSOM, which CSP does not govern.
 * With a map style set, its origin, and blob: workers (MapLibre GL JS may start its worker from a
 * blob); without one, no map library loads and workers come from this origin only.
 */
export function consoleCsp(origin: string, mapStyleUrl = "") {
  const ws = origin.replace(/^http/, "ws");
  // A map style set by the operator: its origin serves the style, tiles, glyphs and sprites.
  const map = mapOrigin(mapStyleUrl);
  const extra = map && map !== origin ? ` ${map}` : "";
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: blob:${extra}`,
    "font-src 'self'",
    `connect-src 'self' ${ws}${extra}`,
    map ? "worker-src 'self' blob:" : "worker-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * The field app's CSP: as the docs page's, plus its service worker and web app manifest from this
 * origin. It talks to this origin only (the API, the signed storage form of contract §8), so
 * `connect-src 'self'`; no map, no WebSocket.
 */
export const FIELD_APP_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * The origin of the operator's map style, or null: unset, or refused by `mapStyleProblem` (an
 * `http:` URL, a wildcard host), which the start-up scripts refuse to run with; a Worker deployed
 * some other way draws no basemap and says why in its log, once per isolate.
 */
let mapStyleLogged = false;
function mapOrigin(url: string): string | null {
  if (!url) return null;
  const problem = mapStyleProblem(url);
  if (problem) {
    if (!mapStyleLogged) console.error(JSON.stringify({ level: "error", msg: "map style ignored", problem }));
    mapStyleLogged = true;
    return null;
  }
  return new URL(url).origin;
}

/**
 * The console's page with the operator's map style named in a `<meta>` (the page has no inline
 * script to carry settings): the console loads MapLibre GL JS and the style only when it is there.
 */
export function consolePage(html: string, mapStyleUrl = ""): string {
  if (!mapOrigin(mapStyleUrl)) return html;
  const escaped = mapStyleUrl.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  return html.replace("</head>", `  <meta name="map-style" content="${escaped}" />\n  </head>`);
}

/** Vite names every built asset by its content's hash: a new build is a new URL. */
const HASHED_ASSET = /\/assets\/[^/]+-[A-Za-z0-9_-]{8,}\.(?:m?js|css|woff2?|png|svg|json)$/;

/**
 * One OpenAPI 3.1 document for the sub-apps that declare routes: each app's registry yields its
 * paths; the securitySchemes and schemas are the API's.
 */
function buildDocument(documented: Router[]) {
  const [first, ...rest] = documented.map((app) =>
    app.getOpenAPI31Document({
      openapi: "3.1.0",
      info: { title: "Field task dispatch service", version: CURRENT_VERSION },
    }),
  );
  const components = (first.components ?? {}) as Record<string, Record<string, unknown>>;
  for (const doc of rest) {
    first.paths = { ...first.paths, ...doc.paths };
    for (const [kind, entries] of Object.entries(doc.components ?? {})) {
      components[kind] = { ...components[kind], ...entries };
    }
  }
  first.components = components;
  return finishDocument(first);
}

const tags = ["Service"];

/** The docs sub-app's own paths, documented like the others (every path served is in the document). */
const documentRoute = createRoute({
  method: "get",
  path: OPENAPI_PATH,
  tags,
  security: [],
  summary: "This OpenAPI 3.1 document",
  description:
    "Generated from the same zod schemas that validate requests. `servers` names the origin the request came to. " +
    "Anonymous, any origin, outside the trailing-slash rule and the API versions.",
  responses: {
    200: {
      description: "The document (OpenAPI 3.1, JSON Schema 2020-12).",
      content: { "application/json": { schema: z.record(z.string(), z.any()) } },
    },
  },
});

const consolePageRoute = createRoute({
  method: "get",
  path: `${CONSOLE_PREFIX}/`,
  tags,
  security: [],
  summary: "The dispatch console (contract §26)",
  description:
    "A single-page app on the public API, served from the service's static files under a Content-Security-Policy without inline script. " +
    "`index.html` is never cached (`Cache-Control: no-cache`); its scripts and styles, under `/console/assets/` and named by their content's hash, are cached for a year. " +
    "`/console` redirects here (301).",
  responses: {
    200: { description: "The page.", content: { "text/html": { schema: z.string() } } },
  },
});

const fieldAppPageRoute = createRoute({
  method: "get",
  path: `${FIELD_APP_PREFIX}/`,
  tags,
  security: [],
  summary: "The field app for workers' phones (contract §27)",
  description:
    "An installable single-page app on the public API (a web app manifest, a service worker scoped to `/app/`), served from the service's static files under a Content-Security-Policy without inline script. " +
    "The page, `sw.js` and `manifest.webmanifest` are never cached (`Cache-Control: no-cache`: a new version reaches phones at their next load); its scripts and styles are the build's hashed files under `/console/assets/` (shared with the console), cached for a year.",
  responses: {
    200: { description: "The page.", content: { "text/html": { schema: z.string() } } },
  },
});

const docsPageRoute = createRoute({
  method: "get",
  path: `${DOCS_PREFIX}/`,
  tags,
  security: [],
  summary: "The API documentation page (Swagger UI over this document)",
  description:
    "Served from the service's own static files (no CDN), under a Content-Security-Policy that allows this origin only. " +
    "`/docs` redirects here (301); the page's scripts and styles are under `/docs/`.",
  responses: {
    200: { description: "The page.", content: { "text/html": { schema: z.string() } } },
  },
});

/**
 * `/openapi.json` and the `/docs/` page that renders it: anonymous, any origin, no versions.
 * The page's files are the static assets of the service's assets-only Worker (static/wrangler.jsonc,
 * reached through the ASSETS service binding; Swagger UI from the pinned swagger-ui-dist), so it
 * renders offline and references no other origin.
 */
export function createDocsApp(documented: Router[]) {
  const app = createRouter();
  app.onError((err, c) => renderError(err, c));
  app.notFound((c) => renderError(notFound(), c));

  app.use("*", requestContext);
  app.use("*", publicCors);
  app.use("*", anonymousCaller);
  app.use("*", rateLimit);

  // The document costs tens of milliseconds of CPU to generate: made once per isolate, and its
  // text kept per origin (`servers` names the origin the request came to; a few at most).
  let document: ReturnType<typeof finishDocument> | null = null;
  const documentText = new Map<string, string>();
  app.get(OPENAPI_PATH, (c) => {
    const origin = new URL(c.req.url).origin;
    let text = documentText.get(origin);
    if (text === undefined) {
      document ??= buildDocument([...documented, app]);
      if (documentText.size >= 16) documentText.clear();
      text = JSON.stringify({
        openapi: document.openapi,
        info: document.info,
        servers: [{ url: origin }],
        ...document,
      });
      documentText.set(origin, text);
    }
    return c.body(text, 200, { "Content-Type": "application/json; charset=utf-8" });
  });

  app.on(["GET", "HEAD"], `${DOCS_PREFIX}/*`, async (c) => {
    // `/docs/*` matches `/docs` too; the page's links are relative to `/docs/`.
    if (!new URL(c.req.url).pathname.startsWith(`${DOCS_PREFIX}/`)) return c.redirect(`${DOCS_PREFIX}/`, 301);
    const asset = await c.env.ASSETS.fetch(c.req.raw);
    if (asset.status === 404) throw notFound();
    const res = new Response(asset.body, asset);
    res.headers.set("Content-Security-Policy", DOCS_CSP);
    res.headers.set("X-Content-Type-Options", "nosniff");
    res.headers.set("Referrer-Policy", "no-referrer");
    return res;
  });

  app.on(["GET", "HEAD"], `${CONSOLE_PREFIX}/*`, async (c) => {
    const url = new URL(c.req.url);
    if (!url.pathname.startsWith(`${CONSOLE_PREFIX}/`)) return c.redirect(`${CONSOLE_PREFIX}/`, 301);
    // The app keeps its state in the page (and the query), so it has no paths of its own to
    // fall back from: a missing file is a 404.
    const hashed = HASHED_ASSET.test(url.pathname);
    const asset = await c.env.ASSETS.fetch(c.req.raw);
    if (asset.status === 404) throw notFound();
    const style = c.env.MAP_STYLE_URL ?? "";
    const isPage = (asset.headers.get("Content-Type") ?? "").startsWith("text/html");
    const body =
      isPage && style && c.req.method === "GET" ? consolePage(await asset.text(), style) : asset.body;
    const res = new Response(body, asset);
    if (body !== asset.body) {
      res.headers.delete("Content-Length");
      res.headers.delete("ETag");
    }
    res.headers.set("Content-Security-Policy", consoleCsp(url.origin, style));
    res.headers.set("X-Content-Type-Options", "nosniff");
    res.headers.set("Referrer-Policy", "no-referrer");
    res.headers.set("Cache-Control", hashed ? "public, max-age=31536000, immutable" : "no-cache");
    return res;
  });

  app.on(["GET", "HEAD"], `${FIELD_APP_PREFIX}/*`, async (c) => {
    const url = new URL(c.req.url);
    if (!url.pathname.startsWith(`${FIELD_APP_PREFIX}/`)) return c.redirect(`${FIELD_APP_PREFIX}/`, 301);
    // The app keeps its place in the URL's fragment: every path it loads is a file.
    const asset = await c.env.ASSETS.fetch(c.req.raw);
    if (asset.status === 404) throw notFound();
    const res = new Response(asset.body, asset);
    res.headers.set("Content-Security-Policy", FIELD_APP_CSP);
    res.headers.set("X-Content-Type-Options", "nosniff");
    res.headers.set("Referrer-Policy", "no-referrer");
    res.headers.set("Cache-Control", "no-cache");
    return res;
  });

  // Documentation only: the handlers above serve these paths (the page's assets too).
  app.openAPIRegistry.registerPath(documentRoute);
  app.openAPIRegistry.registerPath(consolePageRoute);
  app.openAPIRegistry.registerPath(fieldAppPageRoute);
  app.openAPIRegistry.registerPath(docsPageRoute);
  methodNotAllowedOr404(app, getPath);
  return app;
}
