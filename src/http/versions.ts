import { badRequest } from "./errors";

/** A version of the interface's history, as a comparable triple. */
export type ApiVersion = { major: number; minor: number; patch: number; text: string };

export const CURRENT_VERSION = "2.11.4";

// The history lists exact releases and a few condensed series ("2.4.x"); any patch of a
// condensed series is known, exact releases are known as listed.
const EXACT = new Set([
  "1.0.0",
  "1.1.0",
  "2.0.0",
  "2.1.0",
  "2.6.0",
  "2.6.1",
  "2.7.0",
  "2.8.0",
  "2.9.0",
  "2.9.1",
  "2.9.2",
  "2.9.3",
  "2.10.0",
  "2.11.0",
  "2.11.1",
  "2.11.2",
  "2.11.3",
  "2.11.4",
]);
const SERIES = new Set(["2.2", "2.3", "2.4", "2.5"]);

export function parseVersion(text: string): ApiVersion | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text.trim());
  if (!m) return null;
  const v = { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), text: text.trim() };
  v.text = `${v.major}.${v.minor}.${v.patch}`;
  return v;
}

export function isKnownVersion(v: ApiVersion): boolean {
  return EXACT.has(v.text) || SERIES.has(`${v.major}.${v.minor}`);
}

export function compareVersions(a: ApiVersion, b: ApiVersion): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

export const atLeast = (v: ApiVersion, text: string) => compareVersions(v, parseVersion(text)!) >= 0;

/**
 * Reads `version=X.Y.Z` from the Accept header's media-type parameters (contract §1).
 * Returns null when the caller declared none. Unknown or malformed: 400.
 */
export function versionFromAccept(accept: string | undefined): ApiVersion | null {
  if (!accept) return null;
  for (const mediaRange of accept.split(",")) {
    for (const param of mediaRange.split(";").slice(1)) {
      const eq = param.indexOf("=");
      if (eq < 0) continue;
      if (param.slice(0, eq).trim().toLowerCase() !== "version") continue;
      const raw = param
        .slice(eq + 1)
        .trim()
        .replace(/^"|"$/g, "");
      const v = parseVersion(raw);
      if (!v || !isKnownVersion(v)) {
        throw badRequest(
          `Invalid version in "Accept" header: "${raw}". Known versions: 1.0.0 to ${CURRENT_VERSION}.`,
          "not_acceptable_version",
        );
      }
      return v;
    }
  }
  return null;
}

export function resolveVersion(
  declared: ApiVersion | null,
  accountVersion: string | null | undefined,
): ApiVersion {
  if (declared) return declared;
  const pinned = accountVersion ? parseVersion(accountVersion) : null;
  return pinned && isKnownVersion(pinned) ? pinned : parseVersion(CURRENT_VERSION)!;
}

export const ALL_EXACT_VERSIONS = [...EXACT];

/**
 * What an account's `api_version` may be set to: a release of the history, or any patch of a
 * condensed series (the document states it as this `pattern`, issue 46).
 */
export const ACCOUNT_VERSION_RE = new RegExp(
  `^(?:${ALL_EXACT_VERSIONS.map((v) => v.replace(/\./g, "\\.")).join("|")}|2\\.[2-5]\\.\\d+)$`,
);
