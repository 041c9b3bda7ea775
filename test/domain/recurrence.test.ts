import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  firstOccurrence,
  formatInZone,
  instantToWall,
  nextOccurrence,
  occurrencesBetween,
  parseLocal,
  parseRule,
  type Schedule,
  shiftToOccurrence,
  wallToInstant,
} from "../../src/domain/recurrence";

const HEL = "Europe/Helsinki";
const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe("RRULE parsing (RFC 5545 §3.3.10, contract §20)", () => {
  it("accepts rules with or without the RRULE: prefix", () => {
    for (const r of [
      "FREQ=WEEKLY;BYDAY=MO,WE",
      "RRULE:FREQ=DAILY;INTERVAL=2",
      "FREQ=MONTHLY;BYMONTHDAY=-1",
    ]) {
      expect(parseRule(r).ok, r).toBe(true);
    }
  });

  it("refuses what is not a usable rule, with a message", () => {
    const cases: [string, RegExp][] = [
      ["garbage", /Not a valid RFC 5545 RRULE/],
      ["FREQ=DAILY;BYDAY=XX", /Not a valid RFC 5545 RRULE/],
      ["BYDAY=MO", /FREQ is required/],
      ["FREQ=WEEKLY;COUNT=2;UNTIL=20270101T000000Z", /COUNT and UNTIL/],
      ["FREQ=MINUTELY", /MINUTELY/],
      ["FREQ=SECONDLY", /SECONDLY/],
      ["FREQ=DAILY;INTERVAL=0", /INTERVAL/],
      ["DTSTART:20260101T090000\nRRULE:FREQ=DAILY", /one RRULE value/],
      ["", /one RRULE value/],
    ];
    for (const [rule, message] of cases) {
      const r = parseRule(rule);
      expect(r.ok, rule).toBe(false);
      if (!r.ok) expect(r.error, rule).toMatch(message);
    }
  });

  it("never throws, whatever the text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (text) => {
        const r = parseRule(text);
        expect(typeof r.ok).toBe("boolean");
      }),
    );
  });
});

describe("any rule that parses expands without throwing (never a 500)", () => {
  it("holds for rules assembled from valid and invalid parts (property)", () => {
    const parts = [
      "FREQ=DAILY",
      "FREQ=WEEKLY",
      "FREQ=MONTHLY",
      "FREQ=YEARLY",
      "FREQ=HOURLY",
      "BYSETPOS=0",
      "BYSETPOS=-1",
      "BYSETPOS=400",
      "BYHOUR=25",
      "BYHOUR=9",
      "BYMINUTE=61",
      "BYDAY=+1MO",
      "BYDAY=-5FR",
      "BYDAY=53SU",
      "BYWEEKNO=60",
      "BYWEEKNO=-1",
      "BYYEARDAY=366",
      "BYYEARDAY=0",
      "BYMONTHDAY=0",
      "BYMONTHDAY=-31",
      "BYMONTH=13",
      "BYMONTH=2",
      "WKST=XX",
      "WKST=SU",
      "COUNT=-1",
      "COUNT=0",
      "COUNT=5",
      "UNTIL=garbage",
      "UNTIL=20310101",
      "INTERVAL=abc",
      "INTERVAL=1000000",
      "BYEASTER=1",
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...parts), { minLength: 1, maxLength: 4 }), (picked) => {
        const rule = picked.join(";");
        const schedule: Schedule = { rule, start: "2030-01-01T09:00:00", end: null, timezone: HEL };
        if (!parseRule(rule).ok) return;
        occurrencesBetween(schedule, at("2030-01-01T00:00:00Z"), at("2030-01-08T00:00:00Z"), 101);
        firstOccurrence(schedule);
      }),
      { numRuns: 60 },
    );
  });
});

describe("rules that rarely or never match end their walk", () => {
  it("refuses values outside RFC 5545's ranges (BYHOUR=25 could never match)", () => {
    for (const [rule, message] of [
      ["FREQ=DAILY;BYHOUR=25", "BYHOUR must be 0 to 23, not 25"],
      ["FREQ=HOURLY;BYMINUTE=61", "BYMINUTE must be 0 to 59, not 61"],
      ["FREQ=MONTHLY;BYMONTHDAY=0", "BYMONTHDAY must be -31 to -1 or 1 to 31, not 0"],
      ["FREQ=YEARLY;BYYEARDAY=367", "BYYEARDAY must be -366 to -1 or 1 to 366, not 367"],
      ["FREQ=YEARLY;BYWEEKNO=60", "BYWEEKNO must be -53 to -1 or 1 to 53, not 60"],
      ["FREQ=YEARLY;BYMONTH=13", "BYMONTH must be 1 to 12, not 13"],
      // rrule checks BYSETPOS itself.
      ["FREQ=MONTHLY;BYDAY=MO;BYSETPOS=400", "bysetpos must be between 1 and 366"],
    ]) {
      const parsed = parseRule(rule);
      expect(parsed.ok, rule).toBe(false);
      expect(!parsed.ok && parsed.error, rule).toContain(message);
    }
    expect(parseRule("FREQ=YEARLY;BYMONTH=12;BYMONTHDAY=-1;BYHOUR=0,23;BYSETPOS=-1").ok).toBe(true);
  });

  it("an hourly rule that never matches ends (it once looped for ever), one that matches years ahead is found", () => {
    // BYMONTHDAY=-31 is the 1st of a 31-day month, never day 366 (31 December of a leap year).
    const never: Schedule = {
      rule: "FREQ=HOURLY;BYHOUR=9;BYMONTHDAY=-31;BYYEARDAY=366",
      start: "2030-01-01T09:00:00",
      end: null,
      timezone: HEL,
    };
    expect(occurrencesBetween(never, at("2030-01-01T00:00:00Z"), at("2030-01-08T00:00:00Z"), 101)).toEqual(
      [],
    );
    expect(firstOccurrence(never)).toBeNull();
    const leapDay366 = { ...never, rule: "FREQ=HOURLY;BYHOUR=9;BYYEARDAY=366" };
    expect(firstOccurrence(leapDay366)).toBe(at("2032-12-31T07:00:00Z"));
  });
});

describe("local date-times", () => {
  it("parses only YYYY-MM-DDTHH:MM:SS without offset", () => {
    expect(parseLocal("2026-03-02T09:00:00")).toBe(Date.UTC(2026, 2, 2, 9));
    for (const bad of [
      "2026-03-02T09:00:00Z",
      "2026-03-02T09:00:00+02:00",
      "2026-02-30T09:00:00",
      "2026-03-02",
      "x",
    ]) {
      expect(parseLocal(bad), bad).toBeNull();
    }
  });

  it("reads a spring-forward gap with the offset before it, an overlap as its first instant", () => {
    // Helsinki: 2026-03-29 03:00 → 04:00 (+02 → +03); 2026-10-25 04:00 → 03:00 (+03 → +02).
    expect(iso(wallToInstant(HEL, Date.UTC(2026, 2, 29, 3, 30)))).toBe("2026-03-29T01:30:00.000Z");
    expect(iso(wallToInstant(HEL, Date.UTC(2026, 9, 25, 3, 30)))).toBe("2026-10-25T00:30:00.000Z");
  });

  it("wall → instant → wall is the identity outside gaps (property)", () => {
    const zones = [HEL, "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "UTC"];
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2090, 0, 1) }),
        (zone, ms) => {
          const instant = Math.floor(ms / 1000) * 1000;
          const wall = instantToWall(zone, instant);
          // Going back may pick the other instant of an overlap, never another wall time.
          expect(instantToWall(zone, wallToInstant(zone, wall))).toBe(wall);
        },
      ),
    );
  });
});

describe("expansion keeps the local time across daylight-saving changes", () => {
  const weekly: Schedule = {
    rule: "FREQ=WEEKLY;BYDAY=MO",
    start: "2026-03-16T09:00:00",
    end: null,
    timezone: HEL,
  };

  it("a 09:00 Helsinki Monday rule is 09:00 local before and after both changes", () => {
    const got = occurrencesBetween(weekly, at("2026-03-16T00:00:00Z"), at("2026-11-03T00:00:00Z"), 100);
    expect(got.length).toBe(34);
    for (const ms of got) expect(formatInZone(HEL, ms).slice(11, 19)).toBe("09:00:00");
    expect(iso(got[0])).toBe("2026-03-16T07:00:00.000Z"); // +02:00
    expect(iso(got[2])).toBe("2026-03-30T06:00:00.000Z"); // +03:00 after 29 March
    expect(formatInZone(HEL, got.at(-1)!)).toBe("2026-11-02T09:00:00+02:00");
  });

  it("honours end, COUNT and UNTIL (UTC UNTIL read as an instant)", () => {
    const from = at("2026-01-01T00:00:00Z");
    const to = at("2027-01-01T00:00:00Z");
    expect(occurrencesBetween({ ...weekly, end: "2026-03-30T09:00:00" }, from, to, 100).length).toBe(3);
    expect(
      occurrencesBetween({ ...weekly, rule: "FREQ=WEEKLY;BYDAY=MO;COUNT=2" }, from, to, 100).length,
    ).toBe(2);
    // 07:00Z on 30 March is 10:00 Helsinki: that Monday's 09:00 is included, not the next.
    const until = { ...weekly, rule: "FREQ=WEEKLY;BYDAY=MO;UNTIL=20260330T070000Z" };
    expect(occurrencesBetween(until, from, to, 100).map(iso).at(-1)).toBe("2026-03-30T06:00:00.000Z");
  });

  it("stops at the limit, and an impossible rule ends quickly with nothing", () => {
    const hourly = { ...weekly, rule: "FREQ=HOURLY" };
    expect(
      occurrencesBetween(hourly, at("2026-04-01T00:00:00Z"), at("2026-04-08T00:00:00Z"), 50).length,
    ).toBe(50);
    const never = { ...weekly, rule: "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30" };
    expect(nextOccurrence(never, at("2026-04-01T00:00:00Z"))).toBeNull();
    expect(firstOccurrence(weekly)).toBe(at("2026-03-16T07:00:00Z"));
  });

  it("a rule started long ago gives the same occurrences as one started recently (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(
          "FREQ=DAILY",
          "FREQ=DAILY;INTERVAL=3",
          "FREQ=WEEKLY;BYDAY=TU,FR",
          "FREQ=HOURLY;INTERVAL=5",
        ),
        fc.integer({ min: 0, max: 3000 }),
        (rule, days) => {
          const old: Schedule = { rule, start: "2020-01-07T08:15:00", end: null, timezone: HEL };
          const from = Date.UTC(2020, 0, 8) + days * 86_400_000;
          const window = occurrencesBetween(old, from, from + 7 * 86_400_000, 1000);
          // Every occurrence is the next one after its predecessor.
          let prev = from;
          for (const ms of window) {
            expect(nextOccurrence(old, prev)).toBe(ms);
            prev = ms + 1;
          }
          if (rule !== "FREQ=HOURLY;INTERVAL=5") {
            for (const ms of window) expect(formatInZone(HEL, ms).slice(11, 19)).toBe("08:15:00");
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe("shifting template times to an occurrence", () => {
  it("keeps the local distance from the start across a change", () => {
    const s: Schedule = { rule: "FREQ=WEEKLY", start: "2026-03-23T09:00:00", end: null, timezone: HEL };
    const before = at("2026-03-23T15:00:00Z"); // 17:00 local (+02)
    const occurrence = at("2026-03-30T06:00:00Z"); // 09:00 local (+03)
    expect(formatInZone(HEL, shiftToOccurrence(s, before, occurrence))).toBe("2026-03-30T17:00:00+03:00");
    expect(shiftToOccurrence(s, before, at("2026-03-23T07:00:00Z"))).toBe(before);
  });
});
