import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/context";
import { ApiError, notFound } from "../http/errors";
import type { Router } from "../http/openapi";

/**
 * The last route of a sub-app: 405 with `Allow` for a known path hit with another method (DRF's
 * behaviour, RFC 9110 §15.5.6), else 404. Each sub-app answers for its own paths only.
 */
export function methodNotAllowedOr404(app: Router, routingPath: (request: Request) => string) {
  app.all("*", (c) => {
    const allowed = allowedMethods(app, routingPath(c.req.raw));
    if (allowed.length) throw methodNotAllowed(c.req.method, allowed);
    throw notFound();
  });
}

const methodNotAllowed = (method: string, allowed: string[]) =>
  new ApiError(405, "method_not_allowed", `Method "${method}" not allowed.`, { Allow: allowed.join(", ") });

type Pattern = { path: string; re: RegExp; fixed: boolean; methods: Set<string> };
const patternsOf = new WeakMap<Router, Pattern[]>();

/** The app's route patterns with their methods, compiled once (the routes are all registered by the first request). */
function patterns(app: Router): Pattern[] {
  let out = patternsOf.get(app);
  if (out) return out;
  const byPath = new Map<string, Pattern>();
  for (const r of app.routes) {
    if (r.method === "ALL") continue;
    let p = byPath.get(r.path);
    if (!p) {
      const re = new RegExp(`^${r.path.replace(/:[^/]+/g, "[^/]+").replace(/\*$/, ".*")}$`);
      p = { path: r.path, re, fixed: !/[:*]/.test(r.path), methods: new Set() };
      byPath.set(r.path, p);
    }
    p.methods.add(r.method);
  }
  out = [...byPath.values()];
  patternsOf.set(app, out);
  return out;
}

/**
 * The methods of the path's own operations (RFC 9110 §10.2.1: `Allow` lists what the target
 * resource supports). A fixed path beside a parameter route (`/users/me/` beside `/users/{id}/`,
 * `/sms/status/` beside `/sms/{id}/`) is its own resource: the parameter route's methods are not
 * its methods, as they would only answer 404 there.
 */
export function allowedMethods(app: Router, path: string): string[] {
  const matching = patterns(app).filter((p) => p.re.test(path));
  const own = matching.some((p) => p.fixed) ? matching.filter((p) => p.fixed) : matching;
  const methods = new Set(own.flatMap((p) => [...p.methods]));
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods].sort();
}

/**
 * Before the routes: a request to a fixed path with a method only its parameter sibling has
 * (`PATCH /users/me/`, `GET /sms/status/`) is 405 with the fixed path's `Allow`, instead of
 * reaching the sibling's handler, which takes the segment for an id and answers 404.
 */
export function ownMethodsOnly(
  app: Router,
  routingPath: (request: Request) => string,
): MiddlewareHandler<AppEnv> {
  let shadowing: Map<string, string[]> | null = null;
  return async (c, next) => {
    shadowing ??= new Map(
      patterns(app)
        .filter((p) => p.fixed && patterns(app).some((q) => !q.fixed && q.re.test(p.path)))
        .map((p) => [p.path, allowedMethods(app, p.path)]),
    );
    const allowed = shadowing.get(routingPath(c.req.raw));
    if (allowed && !allowed.includes(c.req.method)) throw methodNotAllowed(c.req.method, allowed);
    await next();
  };
}
