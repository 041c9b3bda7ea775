/**
 * Turns the service's real answers into stable examples and the documented request examples
 * into real requests: ids, the host, e-mail addresses, times and secrets of one walk are mapped
 * to the fake values of src/http/openapi-examples.ts and back.
 */
import {
  EXAMPLE_BASE,
  EXAMPLE_IDS,
  EXAMPLE_TOKENS,
  type ExampleName,
  fakeId,
} from "../../src/http/openapi-examples";

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)/g;
const JWT = /eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/g;
const EMAIL_DOMAIN = "acme.example.com";

/** When the examples "happen": the walk's times are moved here, keeping their distance from it. */
export const EXAMPLE_NOW = Date.parse("2030-06-01T08:00:00.000Z");
/** Durations the service adds to "now" (token lifetimes, default expiries), kept as they are. */
// ... and -30 days: how far back `/events/` reaches (`retained_since`).
const LIFETIMES = [
  -30 * 24 * 3600e3,
  0,
  60e3,
  15 * 60e3,
  3600e3,
  24 * 3600e3,
  7 * 24 * 3600e3,
  30 * 24 * 3600e3,
];

const FAKE = {
  jwt: "eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIiwidHlwIjoic2Vzc2lvbitqd3QifQ.eyJzdWIiOiIwMTk1YTNjMC0wMDAyIn0.c2lnbmF0dXJlLW9mLXRoZS1leGFtcGxl",
  accessToken: "fda_Zm9yLWV4YW1wbGVzLW9ubHktMDAwMDAwMDAwMDAwMDAwMA",
  webhookSecret: "whsec_ZXhhbXBsZS1zZWNyZXQtMzItYnl0ZXMtMDAwMDAwMDA=",
  trackerToken: "Qm9vazEyOFJhbmRvbUJpdHM",
  exportToken: "ZXhwb3J0LWNhcGFiaWxpdHk",
  policy: "eyJleHBpcmF0aW9uIjoiMjAzMC0wNi0wMVQwOTowMDowMC4wMDBaIiwiY29uZGl0aW9ucyI6W119",
  signature: "5f1c0e3d9a7b2c4e6f8a0b1c3d5e7f9a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e",
  streamTicket: "c3RyZWFtLXRpY2tldC1mb3ItZXhhbXBsZXMtMDAwMDAwMA",
  /** 2030-06-01T08:15:00Z, the fake clock's 15 minutes later, as a signed link's `expires`. */
  linkExpires: "1906446900",
  amzDate: "20300601T080000Z",
  etag: '"9b2cf535f27731c974343645a3985328"',
};

export class Recorder {
  private fakeOf = new Map<string, string>();
  private realOf = new Map<string, string>();
  private tokens = new Map<string, string>();
  /** Single-use tokens mailed to people the examples do not name (256 random bits, base64url). */
  private otherTokens = new Map<string, string>();
  private next = 0x100;

  constructor(
    readonly realBase: string,
    /** Makes the examples' e-mail addresses unique to this walk (`driver+<tag>@...`). */
    readonly tag: string,
    readonly startedAt = Date.now(),
  ) {}

  /** The object an example names by `name` is the real object `realId`. */
  name(name: ExampleName, realId: string) {
    this.pair(realId.toLowerCase(), EXAMPLE_IDS[name]);
  }

  /** The token an example shows as `fake` (EXAMPLE_TOKENS) is `real` in this walk. */
  token(fake: keyof typeof EXAMPLE_TOKENS, real: string) {
    this.tokens.set(EXAMPLE_TOKENS[fake], real);
  }

  realId(name: ExampleName): string {
    const real = this.realOf.get(EXAMPLE_IDS[name]);
    if (!real) throw new Error(`No object is named ${name} yet`);
    return real;
  }

  private pair(real: string, fake: string) {
    const before = this.fakeOf.get(real);
    if (before && before !== fake) throw new Error(`${real} is already ${before}, not ${fake}`);
    const other = this.realOf.get(fake);
    if (other && other !== real) throw new Error(`${fake} already names ${other}`);
    this.fakeOf.set(real, fake);
    this.realOf.set(fake, real);
  }

  /** A request example as the service must get it in this walk. */
  toReal<T>(value: T): T {
    return mapStrings(value, (s) => {
      let out = s.split(EXAMPLE_BASE).join(this.realBase);
      out = out.replace(UUID, (id) => {
        const real = this.realOf.get(id.toLowerCase());
        if (!real && Object.values(EXAMPLE_IDS).includes(id as never))
          throw new Error(`The example names ${id} before its object exists`);
        return real ?? id;
      });
      out = out.replace(
        new RegExp(`([\\w.-]+)@${EMAIL_DOMAIN.replace(/\./g, "\\.")}`, "g"),
        `$1+${this.tag}@${EMAIL_DOMAIN}`,
      );
      for (const [fake, real] of this.tokens) out = out.split(fake).join(real);
      return out;
    }) as T;
  }

  /**
   * An answer as the document shows it. `shortIds`: ids whose first 8 characters the answer
   * shows as a short name (the route report's title).
   */
  toFake(value: unknown, shortIds: string[] = []): unknown {
    const fakeString = (s: string) => {
      let out = s.split(this.realBase).join(EXAMPLE_BASE);
      // The live stream's URL is the same origin as a WebSocket URL.
      out = out.split(this.realBase.replace(/^http/, "ws")).join(EXAMPLE_BASE.replace(/^http/, "ws"));
      // A stream ticket (single use, random): one fixed fake, in the answer and in its URL.
      out = out.replace(/("ticket": ?"|[?&]ticket=)[\w-]{43}\b/g, `$1${FAKE.streamTicket}`);
      for (const id of shortIds)
        out = out.replace(new RegExp(`\\b${id.slice(0, 8)}\\b(?!-)`, "g"), this.fakeFor(id).slice(0, 8));
      out = out.replace(UUID, (id) => this.fakeFor(id.toLowerCase()));
      out = out.split(`+${this.tag}@`).join("@");
      for (const [fake, real] of this.tokens) out = out.split(real).join(fake);
      out = out.replace(/(token: |"token": \\?")([\w-]{43})\b/g, (_, before: string, token: string) => {
        if (this.tokens.has(token)) return before + token; // already one of EXAMPLE_TOKENS
        if (!this.otherTokens.has(token)) this.otherTokens.set(token, fakeToken(this.otherTokens.size + 1));
        return before + this.otherTokens.get(token);
      });
      out = out.replace(JWT, FAKE.jwt);
      out = out.replace(/fda_[\w-]{20,}/g, FAKE.accessToken);
      out = out.replace(/whsec_[\w+/=]{20,}/g, FAKE.webhookSecret);
      out = out.replace(/(\/t\/)[\w-]{16,64}(\/)/g, `$1${FAKE.trackerToken}$2`);
      out = out.replace(/(\/exports\/[^/]+\/)[\w-]{16,}(\/)/g, `$1${FAKE.exportToken}$2`);
      // Signed links (s3/signed-links.ts): their expiry and signature differ in every run.
      out = out.replace(
        /([?&]expires=)\d+(&signature=)[0-9a-f]{64}/g,
        `$1${FAKE.linkExpires}$2${FAKE.signature}`,
      );
      out = out.replace(ISO, (t) => this.fakeTime(t));
      return out;
    };
    const walk = (v: unknown, key?: string): unknown => {
      if (typeof v === "string") {
        if (key === "policy") return FAKE.policy;
        if (key === "x-amz-signature") return FAKE.signature;
        if (key === "x-amz-date") return FAKE.amzDate;
        if (key === "x-amz-credential") return fakeString(v).replace(/\/\d{8}\//, "/20300601/");
        if (key === "etag" || key === "ETag") return FAKE.etag;
        if (key === "ticket") return FAKE.streamTicket;
        return fakeString(v);
      }
      if (Array.isArray(v)) return v.map((x) => walk(x));
      if (v && typeof v === "object")
        return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
      return v;
    };
    return walk(value);
  }

  private fakeFor(real: string): string {
    let fake = this.fakeOf.get(real);
    if (!fake) {
      fake = fakeId(this.next++);
      this.pair(real, fake);
    }
    return fake;
  }

  /**
   * A time the service made from its clock (within the walk, or a token lifetime after it)
   * moves to the same distance from EXAMPLE_NOW; times the walk sent (2030) stay.
   */
  private fakeTime(text: string): string {
    const t = Date.parse(text);
    const since = t - this.startedAt;
    if (!(since > -31 * 24 * 3600e3 && since < 400 * 24 * 3600e3)) return text;
    const lifetime = LIFETIMES.reduce((a, b) => (Math.abs(since - b) < Math.abs(since - a) ? b : a));
    if (Math.abs(since - lifetime) > 5 * 60e3) {
      throw new Error(`Unexpected time ${text}: ${since} ms after the walk started`);
    }
    const out = new Date(EXAMPLE_NOW + lifetime).toISOString();
    return text.includes(".") ? out : out.replace(/\.\d{3}Z$/, "Z");
  }
}

/** A fake 256-bit base64url token that says what it is. */
const fakeToken = (n: number) => `example-mailed-token-${String(n).padStart(3, "0")}`.padEnd(43, "0");

function mapStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === "string") return f(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, f)]));
  return value;
}
