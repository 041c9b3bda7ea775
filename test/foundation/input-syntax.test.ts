/**
 * The syntax of hyperlinks and timestamps, as the service reads them and as the document states
 * them (issue 56): one regular expression each, so the `pattern` a generator honours is the
 * parser's rule. The tables name the decisions; the properties hold the two to each other.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DAY_PATTERN, isDay, parseTimestamp, timestampPattern } from "../../src/http/timezones";
import { hyperlinkPattern, parseHyperlink } from "../../src/http/urls";
import { call, newAccount } from "../helpers";

const ID = "0f8e7d6c-5b4a-4c3d-9e2f-1a2b3c4d5e6f";

describe("hyperlinks: the document's pattern is the service's rule", () => {
  it("takes a URL of the collection or a bare UUID, and nothing else", () => {
    const taken = [
      ID,
      ID.toUpperCase(),
      ` ${ID}\n`,
      `https://api.example.com/tasks/${ID}/`,
      `https://api.example.com/tasks/${ID}`,
      `http://other.host:8080/api/v2/tasks/${ID}/`,
      `HTTPS://user@host/tasks/${ID}/?expand=routes#top`,
    ];
    const refused = [
      "",
      "x",
      `/tasks/${ID}/`,
      `https://api.example.com/orders/${ID}/`,
      `https://api.example.com/tasks/${ID}/x`,
      `ftp://host/tasks/${ID}/`,
      `mailto:x/tasks/${ID}/`,
      `https:///tasks/${ID}/`,
      `https://host/tasks/${ID.slice(1)}/`,
      `\u001c${ID}`,
    ];
    expect(taken.filter((v) => parseHyperlink(v, "tasks") !== ID)).toEqual([]);
    expect(refused.filter((v) => parseHyperlink(v, "tasks") !== null)).toEqual([]);
  });

  it("a value matches the pattern exactly when the service reads an id from it", () => {
    const pattern = new RegExp(hyperlinkPattern("tasks"), "u");
    const values = fc.oneof(
      fc.stringMatching(pattern),
      fc.string({ unit: "binary" }),
      fc.uuid().map((id) => `https://h/tasks/${id}/`),
    );
    fc.assert(
      fc.property(values, (v) => pattern.test(v) === (parseHyperlink(v, "tasks") !== null)),
      {
        seed: 56,
      },
    );
  });

  it("`blank` adds the empty string, and only it", () => {
    const blank = new RegExp(hyperlinkPattern("users", { blank: true }), "u");
    expect(["", ID].map((v) => blank.test(v))).toEqual([true, true]);
    expect([" ", "\t"].map((v) => blank.test(v))).toEqual([false, false]);
  });
});

describe("timestamps and days: the dates as written, from 1970 to 2099", () => {
  it("reads the range on the date as written, in its own offset", () => {
    expect(parseTimestamp("1970-01-01T00:30:00+01:00", null)).toBe(Date.UTC(1969, 11, 31, 23, 30));
    expect(parseTimestamp("2099-12-31T23:59:59-12:00", null)).toBe(Date.UTC(2100, 0, 1, 11, 59, 59));
    expect(parseTimestamp("1969-12-31T23:59:59Z", null)).toBeNull();
    expect(parseTimestamp("2100-01-01T00:00:00Z", null)).toBeNull();
  });

  it("refuses what is not a time: hour 24, minute 60, a leap second, an offset past 23:59, 10 digits", () => {
    for (const v of [
      "2026-01-01T24:00:00Z",
      "2026-01-01T10:60:00Z",
      "2026-06-30T23:59:60Z",
      "2026-01-01T10:00:00+24:00",
      "2026-01-01T10:00:00.1234567890Z",
      "2026-02-29T10:00:00Z",
      "",
    ])
      expect(parseTimestamp(v, null), v).toBeNull();
    expect(parseTimestamp("2026-01-01 10:00+0200", null)).toBe(Date.UTC(2026, 0, 1, 8));
    expect(parseTimestamp("2026-01-01t10:00:00.123456789z", null)).toBe(Date.UTC(2026, 0, 1, 10, 0, 0, 123));
  });

  it("a value matches the pattern exactly when the service reads an instant from it (spaces around aside)", () => {
    const pattern = new RegExp(timestampPattern());
    const day = new RegExp(DAY_PATTERN);
    const values = fc.oneof(
      fc.stringMatching(pattern),
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      fc.string(),
    );
    fc.assert(
      // `parseTimestamp` trims (a leniency beyond `format: date-time`, which has no spaces either).
      fc.property(values, (v) => pattern.test(v.trim()) === (parseTimestamp(v, "Europe/Helsinki") !== null)),
      { seed: 56 },
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.stringMatching(day),
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
        ),
        (v) => day.test(v) === isDay(v) && isDay(v) === (parseTimestamp(`${v}T00:00:00Z`, null) !== null),
      ),
      { seed: 56 },
    );
  });

  it("a list's last day, 2099-12-31, is a day like any other; an empty time filter is 400", async () => {
    const acc = await newAccount();
    const token = acc.admin.token;
    expect((await call("/tasks/?day=2099-12-31", { token })).status).toBe(200);
    expect((await call("/tasks/?day=2100-01-01", { token })).status).toBe(400);
    const empty = await call("/task_commands/?created_at__gte=", { token });
    expect([empty.status, Object.keys(empty.body)]).toEqual([400, ["created_at__gte"]]);
  });
});
