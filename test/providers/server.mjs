// Vitest global setup (runs in Node, outside the Workers runtime): one small local HTTP server
// speaking the published APIs of the real providers the service can be configured with, so
// their providers are tested over real HTTP, with nothing outside the machine:
//
//   /nominatim/...   Nominatim's search and reverse API, format=jsonv2
//                    (https://nominatim.org/release-docs/latest/api/Search/, .../Reverse/)
//   /osrm/<tag>/...  OSRM's table service, with its max-table-size check
//                    (http://project-osrm.org/docs/v5.24.0/api/#table-service)
//   /twilio/...      Twilio's Programmable Messaging REST API (Messages resource) and its signed
//                    status callbacks (https://www.twilio.com/docs/messaging/api/message-resource,
//                    https://www.twilio.com/docs/usage/webhooks/webhooks-security)
//
// The `/__...` paths are the tests' own controls (recorded requests, outages, callbacks); no
// provider has them. Answers are computed, never canned, so a wrong request gets a wrong or
// refused answer as it would from the real service.
import { createHmac, randomBytes } from "node:crypto";
import { createServer } from "node:http";

/** The auth token the Twilio stand-in accepts and signs callbacks with (vitest.config.ts gives the Worker the same). */
export const TWILIO_TEST_AUTH_TOKEN = "test-twilio-auth-token";
/** The OSRM stand-in's --max-table-size (OSRM's default). */
export const OSRM_MAX_TABLE_SIZE = 100;
/** The OSRM stand-in's road model: great-circle × 1.2 at 12.5 m/s (45 km/h). */
export const OSRM_DETOUR = 1.2;
export const OSRM_SPEED = 12.5;

const json = (res, status, body, headers = {}) => {
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
};

// ---- Nominatim: a small gazetteer searched as a geocoder would (every word of the query in the name).
const PLACES = [
  {
    osm_type: "way",
    osm_id: 1879842,
    lat: 51.50344025,
    lon: -0.12770820958562096,
    category: "building",
    type: "yes",
    name: "10 Downing Street",
    display_name:
      "10 Downing Street, Downing Street, Westminster, Millbank, London, Greater London, England, SW1A 2AA, United Kingdom",
  },
  {
    osm_type: "node",
    osm_id: 3372826063,
    lat: 59.437,
    lon: 24.7453,
    category: "amenity",
    type: "townhall",
    name: "Tallinna raekoda",
    display_name: "Tallinna raekoda, 1, Raekoja plats, Vanalinn, Kesklinna linnaosa, Tallinn, 10146, Eesti",
  },
  {
    osm_type: "relation",
    osm_id: 34914,
    lat: 60.1674881,
    lon: 24.9427473,
    category: "boundary",
    type: "administrative",
    name: "Helsinki",
    display_name: "Helsinki, Helsingin seutukunta, Uusimaa, Manner-Suomi, Suomi / Finland",
  },
];
const place = (p, i) => ({
  place_id: 1000 + i,
  licence: "Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright",
  osm_type: p.osm_type,
  osm_id: p.osm_id,
  lat: String(p.lat),
  lon: String(p.lon),
  category: p.category,
  type: p.type,
  place_rank: 30,
  importance: 0.5,
  addresstype: p.type,
  name: p.name,
  display_name: p.display_name,
  boundingbox: [p.lat - 0.0002, p.lat + 0.0002, p.lon - 0.0002, p.lon + 0.0002].map(String),
});
const words = (s) =>
  s
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()
    .split(" ");

function nominatim(req, res, url, rest) {
  // Nominatim's usage policy: requests must identify the application.
  if (!req.headers["user-agent"]) return json(res, 403, { error: "Access blocked: no User-Agent" });
  const format = url.searchParams.get("format") ?? "xml";
  if (!["json", "jsonv2", "geojson", "geocodejson", "xml"].includes(format))
    return json(res, 400, {
      error: {
        code: 400,
        message: "Parameter 'format' must be one of: xml, json, jsonv2, geojson, geocodejson",
      },
    });
  if (format !== "jsonv2") return json(res, 501, { error: "this stand-in speaks format=jsonv2 only" });
  if (rest === "search") {
    const q = url.searchParams.get("q") ?? "";
    const limit = Math.min(40, Number(url.searchParams.get("limit") ?? 10) || 10);
    const want = words(q).filter(Boolean);
    const found = PLACES.map(place)
      .filter((p) => want.length > 0 && want.every((w) => words(p.display_name).includes(w)))
      .slice(0, limit);
    return json(res, 200, found);
  }
  if (rest === "reverse") {
    const lat = Number(url.searchParams.get("lat"));
    const lon = Number(url.searchParams.get("lon"));
    if (!url.searchParams.has("lat") || !Number.isFinite(lat) || !Number.isFinite(lon))
      return json(res, 400, { error: { code: 400, message: "Need coordinates or OSM object to lookup." } });
    const near = PLACES.map(place).find(
      (p) => greatCircle([lon, lat], [Number(p.lon), Number(p.lat)]) < 1000,
    );
    return json(res, 200, near ?? { error: "Unable to geocode" });
  }
  return json(res, 404, { error: "Unknown endpoint" });
}

// ---- OSRM table service.
function greatCircle(a, b) {
  const rad = Math.PI / 180;
  const h =
    Math.sin(((b[1] - a[1]) * rad) / 2) ** 2 +
    Math.cos(a[1] * rad) * Math.cos(b[1] * rad) * Math.sin(((b[0] - a[0]) * rad) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(h)));
}
/** Antarctica has no roads to the rest of the world: no route in or out (OSRM answers null). */
const island = (p) => p[1] < -60;
const osrmStats = new Map();

function osrm(res, url, tag, rest) {
  const stats = osrmStats.get(tag) ?? { requests: 0, largest: 0 };
  osrmStats.set(tag, stats);
  if (rest === "__stats") return json(res, 200, stats);
  const m = /^table\/v1\/([a-z]+)\/(.+)$/.exec(rest);
  if (!m)
    return json(res, 400, {
      code: "InvalidUrl",
      message: `URL string malformed close to position 1: "/${rest}"`,
    });
  stats.requests++;
  const coords = decodeURIComponent(m[2])
    .split(";")
    .map((c) => c.split(",").map(Number));
  const bad = coords.findIndex(
    (c) => c.length !== 2 || !c.every(Number.isFinite) || Math.abs(c[0]) > 180 || Math.abs(c[1]) > 90,
  );
  if (bad >= 0)
    return json(res, 400, {
      code: "InvalidQuery",
      message: `Query string malformed close to position ${bad}`,
    });
  const indexes = (name) => {
    const v = url.searchParams.get(name);
    if (v === null || v === "all") return coords.map((_, i) => i);
    const ix = v.split(";").map(Number);
    return ix.every((i) => Number.isInteger(i) && i >= 0 && i < coords.length) ? ix : null;
  };
  const sources = indexes("sources");
  const destinations = indexes("destinations");
  if (!sources || !destinations)
    return json(res, 400, { code: "InvalidOptions", message: "Index out of bounds" });
  if (sources.length * destinations.length > OSRM_MAX_TABLE_SIZE ** 2)
    return json(res, 400, { code: "TooBig", message: "Too many table coordinates" });
  stats.largest = Math.max(stats.largest, sources.length * destinations.length);
  const annotations = (url.searchParams.get("annotations") ?? "duration").split(",");
  const metres = (i, j) => {
    if (i === j) return 0;
    const a = coords[i];
    const b = coords[j];
    if (island(a) !== island(b)) return null;
    return Math.round(greatCircle(a, b) * OSRM_DETOUR * 10) / 10;
  };
  const waypoint = (i) => ({ hint: "", distance: 0, name: "", location: coords[i] });
  const body = { code: "Ok", sources: sources.map(waypoint), destinations: destinations.map(waypoint) };
  if (annotations.includes("distance"))
    body.distances = sources.map((i) => destinations.map((j) => metres(i, j)));
  if (annotations.includes("duration"))
    body.durations = sources.map((i) =>
      destinations.map((j) => {
        const d = metres(i, j);
        return d === null ? null : Math.round((d / OSRM_SPEED) * 10) / 10;
      }),
    );
  return json(res, 200, body);
}

// ---- Twilio Messages resource.
const twilioMessages = new Map(); // account SID → messages
const twilioOutages = new Map(); // account SID → sends still to refuse with 503
const twilioError = (res, status, code, message) =>
  json(res, status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });

/** X-Twilio-Signature: base64 HMAC-SHA1 of the URL and the POST parameters sorted by name. */
function twilioSign(url, params) {
  let data = url;
  for (const name of Object.keys(params).sort()) data += name + params[name];
  return createHmac("sha1", TWILIO_TEST_AUTH_TOKEN).update(data, "utf8").digest("base64");
}

async function twilio(req, res, rest, answerAfterMs = 0) {
  let m = /^__messages\/(AC[0-9a-f]{32})$/.exec(rest);
  if (m) return json(res, 200, twilioMessages.get(m[1]) ?? []);
  m = /^__outage\/(AC[0-9a-f]{32})\/(\d+)$/.exec(rest);
  if (m) {
    twilioOutages.set(m[1], Number(m[2]));
    return json(res, 200, { outage: Number(m[2]) });
  }
  m = /^__callback\/(AC[0-9a-f]{32})\/(SM[0-9a-f]{32})\/([a-z]+)$/.exec(rest);
  if (m) {
    const msg = (twilioMessages.get(m[1]) ?? []).find((x) => x.sid === m[2]);
    if (!msg?.status_callback) return json(res, 404, { error: "no such message or no StatusCallback" });
    const params = {
      AccountSid: m[1],
      ApiVersion: "2010-04-01",
      From: msg.from,
      MessageSid: msg.sid,
      MessageStatus: m[3],
      SmsSid: msg.sid,
      SmsStatus: m[3],
      To: msg.to,
      ...(m[3] === "undelivered" || m[3] === "failed" ? { ErrorCode: "30003" } : {}),
    };
    return json(res, 200, {
      url: msg.status_callback,
      params,
      signature: twilioSign(msg.status_callback, params),
    });
  }
  m = /^2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(rest);
  if (!m) return twilioError(res, 404, 20404, "The requested resource was not found");
  if (req.method !== "POST") return twilioError(res, 405, 20004, "Method not allowed");
  const sid = m[1];
  const [user, pass] = Buffer.from((req.headers.authorization ?? "").replace(/^Basic /, ""), "base64")
    .toString()
    .split(":");
  if (user !== sid || pass !== TWILIO_TEST_AUTH_TOKEN) return twilioError(res, 401, 20003, "Authenticate");
  const outage = twilioOutages.get(sid) ?? 0;
  if (outage > 0) {
    twilioOutages.set(sid, outage - 1);
    return twilioError(res, 503, 20500, "Service Unavailable");
  }
  if (!String(req.headers["content-type"]).startsWith("application/x-www-form-urlencoded"))
    return twilioError(res, 400, 20001, "Unsupported Content-Type");
  let raw = "";
  for await (const chunk of req) raw += chunk;
  const form = new URLSearchParams(raw);
  const to = form.get("To");
  const from = form.get("From");
  const body = form.get("Body");
  if (!to) return twilioError(res, 400, 21604, "A 'To' phone number is required.");
  if (!/^\+[1-9]\d{1,14}$/.test(to))
    return twilioError(res, 400, 21211, `The 'To' number ${to} is not a valid phone number.`);
  if (!from) return twilioError(res, 400, 21603, "A 'From' phone number is required.");
  if (!body) return twilioError(res, 400, 21602, "Message body is required.");
  if ([...body].length > 1600)
    return twilioError(res, 400, 21617, "The concatenated message body exceeds the 1600 character limit.");
  const messageSid = `SM${randomBytes(16).toString("hex")}`;
  const now = new Date().toUTCString().replace("GMT", "+0000");
  const message = {
    account_sid: sid,
    api_version: "2010-04-01",
    body,
    date_created: now,
    date_sent: null,
    date_updated: now,
    direction: "outbound-api",
    error_code: null,
    error_message: null,
    from,
    messaging_service_sid: null,
    num_media: "0",
    num_segments: String(Math.max(1, Math.ceil([...body].length / 153))),
    price: null,
    price_unit: "USD",
    sid: messageSid,
    status: "queued",
    subresource_uris: { media: `/2010-04-01/Accounts/${sid}/Messages/${messageSid}/Media.json` },
    to,
    uri: `/2010-04-01/Accounts/${sid}/Messages/${messageSid}.json`,
  };
  const list = twilioMessages.get(sid) ?? [];
  list.push({ ...message, status_callback: form.get("StatusCallback") });
  twilioMessages.set(sid, list);
  if (answerAfterMs) await new Promise((resolve) => setTimeout(resolve, answerAfterMs));
  return json(res, 201, message);
}

export default async function setup({ provide }) {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const [, service, ...parts] = url.pathname.split("/");
    const handle = async () => {
      if (service === "nominatim") return nominatim(req, res, url, parts.join("/"));
      if (service === "nominatim-down") return json(res, 503, { error: "Service Unavailable" });
      if (service === "osrm") return osrm(res, url, parts[0], parts.slice(1).join("/"));
      if (service === "twilio") return twilio(req, res, parts.join("/"));
      // Twilio taking the message, then answering after the client has given up waiting.
      if (service === "twilio-slow") return twilio(req, res, parts.join("/"), 1500);
      return json(res, 404, { error: "unknown service" });
    };
    handle().catch((err) => json(res, 500, { error: String(err) }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  provide("providers", { url: `http://127.0.0.1:${port}` });
  return () => new Promise((resolve) => server.close(resolve));
}
