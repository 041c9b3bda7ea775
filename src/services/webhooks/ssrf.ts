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
 * checks below look at it.
 */

export const PRIVATE_URL_MESSAGE =
  "Webhook URLs may not point to loopback, private, link-local or metadata addresses.";

/** Names that only resolve inside a private network or the host itself. */
const BLOCKED_NAMES = new Set(["localhost", "metadata", "metadata.google.internal", "instance-data"]);
const BLOCKED_SUFFIXES = [
  ".localhost", // RFC 6761 §6.3
  ".local", // RFC 6762 (mDNS)
  ".internal", // ICANN's private-use TLD; also metadata.google.internal
  ".home.arpa", // RFC 8375
];

/**
 * Returns why `raw` may not be used as a webhook URL, or null when it may. With
 * `allowPrivate` (local development: `WEBHOOKS_ALLOW_PRIVATE=true`) plain http and private
 * hosts are allowed.
 */
export function webhookUrlError(raw: string, allowPrivate: boolean): string | null {
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
  const v4 = parseIPv4(host);
  if (v4 !== null) return isPrivateV4(v4);
  if (BLOCKED_NAMES.has(host) || BLOCKED_SUFFIXES.some((s) => host.endsWith(s))) return true;
  // A single-label name only resolves through a local search domain, never publicly.
  return !host.includes(".");
}

/** Dotted-quad only (the URL parser has already canonicalized other IPv4 spellings). */
export function parseIPv4(s: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return null;
  return ((parts[0] << 24) >>> 0) + (parts[1] << 16) + (parts[2] << 8) + parts[3];
}

/** IPv4 ranges that are not globally reachable (RFC 6890 / the IANA special-purpose registry). */
const V4_BLOCKS: [string, number][] = [
  ["0.0.0.0", 8], // "this network", including 0.0.0.0
  ["10.0.0.0", 8], // RFC 1918
  ["100.64.0.0", 10], // RFC 6598 carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, including 169.254.169.254 (cloud metadata)
  ["172.16.0.0", 12], // RFC 1918
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // TEST-NET-1
  ["192.168.0.0", 16], // RFC 1918
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // TEST-NET-2
  ["203.0.113.0", 24], // TEST-NET-3
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, including 255.255.255.255
];

export function isPrivateV4(addr: number): boolean {
  return V4_BLOCKS.some(([base, bits]) => {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    return (addr & mask) >>> 0 === (parseIPv4(base)! & mask) >>> 0;
  });
}

/** Eight 16-bit groups, or null when `s` is not an IPv6 address (RFC 4291 §2.2 text forms). */
export function parseIPv6(s: string): number[] | null {
  let text = s.toLowerCase();
  if (text.includes("%")) return null; // zone ids are not valid in URLs (WHATWG)
  const tail: number[] = [];
  const dotted = /^(.*:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (dotted) {
    const v4 = parseIPv4(dotted[2]);
    if (v4 === null) return null;
    tail.push(v4 >>> 16, v4 & 0xffff);
    text = dotted[1].endsWith("::") ? dotted[1] : dotted[1].slice(0, -1);
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === "" ? [] : h.split(":"));
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  if ([...head, ...rest].some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  const known = head.length + rest.length + tail.length;
  if (halves.length === 1 ? known !== 8 : known > 7) return null;
  const zeros = halves.length === 2 ? 8 - known : 0;
  return [
    ...head.map((g) => parseInt(g, 16)),
    ...Array(zeros).fill(0),
    ...rest.map((g) => parseInt(g, 16)),
    ...tail,
  ];
}

const v4Of = (hi: number, lo: number) => ((hi << 16) >>> 0) + lo;

export function isPrivateV6(g: number[]): boolean {
  const [a, b] = g;
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  // ::/128 unspecified, ::1 loopback, ::/96 IPv4-compatible (deprecated): the embedded IPv4 decides.
  if (zeroUpTo(6)) return g[6] === 0 && g[7] <= 1 ? true : isPrivateV4(v4Of(g[6], g[7]));
  if (zeroUpTo(5) && g[5] === 0xffff) return isPrivateV4(v4Of(g[6], g[7])); // ::ffff:0:0/96 mapped
  if (a === 0x64 && b === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return isPrivateV4(v4Of(g[6], g[7])); // 64:ff9b::/96 NAT64 (RFC 6052)
  if (a === 0x64 && b === 0xff9b && g[2] === 1) return true; // 64:ff9b:1::/48 local NAT64 (RFC 8215)
  if (a === 0x100 && b === 0 && g[2] === 0 && g[3] === 0) return true; // 100::/64 discard
  if (a === 0x2001 && b === 0x0db8) return true; // documentation
  if (a === 0x2001 && b === 0) return true; // Teredo: the real IPv4 is hidden in the address
  if (a === 0x2002) return isPrivateV4(v4Of(b, g[2])); // 6to4 (RFC 3056) embeds an IPv4
  if ((a & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local
  if ((a & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((a & 0xffc0) === 0xfec0) return true; // fec0::/10 site-local (deprecated)
  if ((a & 0xff00) === 0xff00) return true; // multicast
  return false;
}
