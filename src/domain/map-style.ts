/**
 * The operator's `MAP_STYLE_URL` (docs/configuration.md; issue 52 item 5): its origin is added to
 * the console's Content-Security-Policy, so it must name one concrete host over TLS. An `http:`
 * URL would let tiles be swapped in transit; a `*` in the host (`https://*.example/…`, which the
 * WHATWG URL parser accepts) would become a CSP wildcard source allowing every subdomain; user
 * info in the URL is a credential in a public page. Empty: no basemap.
 *
 * The same rule, for the start-up scripts (which run on Node without a TypeScript loader), is in
 * scripts/map-style.mjs; test/web/serving.test.ts holds the two to the same answers.
 */
export function mapStyleProblem(url: string): string | null {
  if (!url) return null;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `MAP_STYLE_URL is not a URL: ${JSON.stringify(url)}.`;
  }
  if (u.protocol !== "https:") return `MAP_STYLE_URL must be an https: URL, not ${u.protocol} (${url}).`;
  if (!u.hostname || u.hostname.includes("*"))
    return `MAP_STYLE_URL must name one concrete host, without a wildcard (${url}).`;
  if (u.username || u.password) return "MAP_STYLE_URL must not carry a user name or password.";
  return null;
}
