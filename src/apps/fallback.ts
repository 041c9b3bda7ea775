import { ApiError, notFound } from "../http/errors";
import type { Router } from "../http/openapi";

/**
 * The last route of a sub-app: 405 with `Allow` for a known path hit with another method (DRF's
 * behaviour, RFC 9110 §15.5.6), else 404. Each sub-app answers for its own paths only.
 */
export function methodNotAllowedOr404(app: Router, routingPath: (request: Request) => string) {
  app.all("*", (c) => {
    const allowed = allowedMethods(app, routingPath(c.req.raw));
    if (allowed.length) {
      throw new ApiError(405, "method_not_allowed", `Method "${c.req.method}" not allowed.`, {
        Allow: allowed.join(", "),
      });
    }
    throw notFound();
  });
}

function allowedMethods(app: Router, path: string): string[] {
  const methods = new Set<string>();
  for (const r of app.routes) {
    if (r.method === "ALL") continue;
    const re = new RegExp(`^${r.path.replace(/:[^/]+/g, "[^/]+").replace(/\*$/, ".*")}$`);
    if (re.test(path)) methods.add(r.method);
  }
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods].sort();
}
