/**
 * SSRF guard for webhook URLs (contract §9): the service must not be turned into a proxy that
 * reaches its own network, the loopback interface or a cloud metadata endpoint.
 *
 * Workers cannot resolve DNS themselves, so hostnames are judged by name and IP literals by
 * address only: a public-looking name whose DNS points at a private address is not caught here
 * (Cloudflare's egress does not route to private space anyway). Redirects are never followed
 * (`redirect: "manual"` at send time), so a public URL cannot bounce a delivery inward either.
 *
 * The URL is parsed with the WHATWG URL parser first, which canonicalizes the tricky spellings
 * of IPv4 (`127.1`, `0x7f000001`, `2130706433`, percent-encoded digits) and IPv6 before the
 * checks below look at it. Address ranges come from `ipaddr.js` (the IANA special-purpose
 * registries): only its `unicast` range, the globally routable space, is allowed.
 *
 * What the name check adds to the platform: a Worker's `fetch` cannot reach the loopback or
 * private networks of Cloudflare's own machines, but a name that resolves to such an address
 * on the receiver's side of a tunnel, or to another Cloudflare customer's origin, still could
 * be abused; wildcard-DNS services (`127.0.0.1.nip.io`, `localtest.me`, `*.localhost`) exist
 * exactly to make a public-looking name point at loopback, so they are refused by name, and
 * names that embed a private address (`10-0-0-1.sslip.io`) too. Only web ports are allowed
 * (`WEBHOOK_ALLOWED_PORTS`), so a webhook cannot knock on SSH, SMTP or database ports.
 */
import ipaddr from "ipaddr.js";

export const PRIVATE_URL_MESSAGE =
  "Webhook URLs may not point to loopback, private, link-local or metadata addresses.";

export const DEFAULT_WEBHOOK_PORTS = [80, 443, 8080, 8443];

/** `WEBHOOK_ALLOWED_PORTS`: comma-separated port numbers (default 80, 443, 8080, 8443). */
export function allowedPorts(env: { WEBHOOK_ALLOWED_PORTS?: string }): Set<number> {
  const list = (env.WEBHOOK_ALLOWED_PORTS ?? "")
    .split(",")
    .map((p) => Number(p.trim()))
    .filter((p) => Number.isInteger(p) && p > 0 && p < 65536);
  return new Set(list.length ? list : DEFAULT_WEBHOOK_PORTS);
}

/** Names that only resolve inside a private network or the host itself. */
const BLOCKED_NAMES = new Set([
  "localhost",
  "metadata",
  "metadata.google.internal",
  "instance-data",
  // Public names whose DNS answers loopback for every subdomain (development helpers).
  "localtest.me",
  "lvh.me",
  "vcap.me",
  "nip.io",
  "sslip.io",
  "xip.io",
  "traefik.me",
  "localh.st",
]);
const BLOCKED_SUFFIXES = [
  ".localhost", // RFC 6761 §6.3
  ".local", // RFC 6762 (mDNS)
  ".internal", // ICANN's private-use TLD; also metadata.google.internal
  ".home.arpa", // RFC 8375
  // Wildcard DNS: `<address>.nip.io` resolves to <address>; the others to 127.0.0.1.
  ".nip.io",
  ".sslip.io",
  ".xip.io",
  ".localtest.me",
  ".lvh.me",
  ".vcap.me",
  ".traefik.me",
  ".localh.st",
];

/**
 * Returns why `raw` may not be used as a webhook URL, or null when it may. With
 * `allowPrivate` (local development: `WEBHOOKS_ALLOW_PRIVATE=true`) plain http, private
 * hosts and any port are allowed.
 */
export function webhookUrlError(
  raw: string,
  allowPrivate: boolean,
  ports: Set<number> = new Set(DEFAULT_WEBHOOK_PORTS),
): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return "Enter a valid URL.";
  }
  if (u.protocol !== "https:" && !(allowPrivate && u.protocol === "http:")) {
    return allowPrivate ? "Only http and https URLs are allowed." : "Only https URLs are allowed.";
  }
  // Credentials in the URL would be sent to the receiver and shown in every listing.
  if (u.username || u.password) return "URLs with credentials are not allowed.";
  if (allowPrivate) return null;
  const port = u.port ? Number(u.port) : u.protocol === "https:" ? 443 : 80;
  if (!ports.has(port))
    return `Only these ports are allowed: ${[...ports].sort((a, b) => a - b).join(", ")}.`;
  return isPrivateHost(u.hostname) ? PRIVATE_URL_MESSAGE : null;
}

/** `hostname` as URL.hostname gives it: lower case, IPv6 in brackets. */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (!host) return true;
  if (host.startsWith("[")) {
    const v6 = parseIPv6(host.slice(1, -1));
    return v6 === null || isPrivateV6(v6);
  }
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return isPrivateV4(ipaddr.IPv4.parse(host).toByteArray());
  if (BLOCKED_NAMES.has(host) || BLOCKED_SUFFIXES.some((s) => host.endsWith(s))) return true;
  // A name that embeds a non-public address (`10.0.0.1.example.com`, `10-0-0-1.example.com`)
  // is a wildcard-DNS trick: such services answer the embedded address.
  for (const m of host.matchAll(/(?:^|[.-])(\d{1,3})[.-](\d{1,3})[.-](\d{1,3})[.-](\d{1,3})(?=$|[.-])/g)) {
    const bytes = m.slice(1, 5).map(Number);
    if (bytes.every((b) => b <= 255) && isPrivateV4(bytes)) return true;
  }
  // A single-label name only resolves through a local search domain, never publicly.
  return !host.includes(".");
}

/** Four bytes of an IPv4 address; anything but globally routable unicast is private. */
export function isPrivateV4(bytes: number[]): boolean {
  return ipaddr.IPv4.parse(bytes.join(".")).range() !== "unicast";
}

/** Eight 16-bit groups, or null when `s` is not an IPv6 address (RFC 4291 §2.2 text forms). */
export function parseIPv6(s: string): number[] | null {
  if (s.includes("%")) return null; // zone ids are not valid in URLs (WHATWG)
  return ipaddr.IPv6.isValid(s) ? ipaddr.IPv6.parse(s).parts.slice() : null;
}

const v4Bytes = (hi: number, lo: number) => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];

export function isPrivateV6(g: number[]): boolean {
  const addr = new ipaddr.IPv6(g);
  const range = addr.range();
  // Forms that carry an IPv4 address: the embedded address decides.
  if (g.slice(0, 6).every((x) => x === 0)) {
    // ::/128, ::1 and the deprecated IPv4-compatible ::a.b.c.d (RFC 4291 §2.5.5.1).
    return g[6] === 0 && g[7] <= 1 ? true : isPrivateV4(v4Bytes(g[6], g[7]));
  }
  if (range === "ipv4Mapped") return isPrivateV4(v4Bytes(g[6], g[7]));
  if (range === "rfc6052" && g[2] === 0) return isPrivateV4(v4Bytes(g[6], g[7])); // NAT64 64:ff9b::/96
  if (range === "6to4") return isPrivateV4(v4Bytes(g[1], g[2])); // RFC 3056
  return range !== "unicast";
}
