// RFC 7233 ranges and RFC 7232 preconditions, as the /files/ endpoint decides them.
import { describe, expect, it } from "vitest";
import { evaluatePreconditions, ifRangeHolds, parseRange } from "../../src/s3/serve";

describe("parseRange (RFC 7233)", () => {
  it.each([
    ["bytes=0-99", 1000, { kind: "range", offset: 0, length: 100 }],
    ["bytes=100-", 1000, { kind: "range", offset: 100, length: 900 }],
    ["bytes=-100", 1000, { kind: "range", offset: 900, length: 100 }],
    ["bytes=-5000", 1000, { kind: "range", offset: 0, length: 1000 }],
    ["bytes=990-5000", 1000, { kind: "range", offset: 990, length: 10 }],
    ["BYTES = 5 - 9", 1000, { kind: "range", offset: 5, length: 5 }],
    ["bytes=999-999", 1000, { kind: "range", offset: 999, length: 1 }],
    ["bytes=1000-", 1000, { kind: "unsatisfiable" }],
    ["bytes=-0", 1000, { kind: "unsatisfiable" }],
    ["bytes=0-1,5-9", 1000, { kind: "none" }],
    ["bytes=9-5", 1000, { kind: "none" }],
    ["items=0-5", 1000, { kind: "none" }],
    ["bytes=abc", 1000, { kind: "none" }],
    ["bytes=-", 1000, { kind: "none" }],
    ["bytes=0-", 0, { kind: "none" }],
    [null, 1000, { kind: "none" }],
  ])("%s of %i bytes", (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });
});

describe("evaluatePreconditions (RFC 7232 §6)", () => {
  const v = { etag: '"abc"', lastModified: Date.parse("2026-05-01T10:00:00.600Z") };
  const h = (init: Record<string, string>) => new Headers(init);
  it("If-None-Match: weak comparison, * matches, 304 for GET/HEAD, 412 otherwise", () => {
    expect(evaluatePreconditions(h({ "If-None-Match": '"abc"' }), "GET", v)).toBe("not-modified");
    expect(evaluatePreconditions(h({ "If-None-Match": 'W/"abc"' }), "HEAD", v)).toBe("not-modified");
    expect(evaluatePreconditions(h({ "If-None-Match": '"x", "abc"' }), "GET", v)).toBe("not-modified");
    expect(evaluatePreconditions(h({ "If-None-Match": "*" }), "GET", v)).toBe("not-modified");
    expect(evaluatePreconditions(h({ "If-None-Match": '"x"' }), "GET", v)).toBe("proceed");
    expect(evaluatePreconditions(h({ "If-None-Match": '"abc"' }), "POST", v)).toBe("failed");
  });
  it("If-Match: strong comparison", () => {
    expect(evaluatePreconditions(h({ "If-Match": '"abc"' }), "GET", v)).toBe("proceed");
    expect(evaluatePreconditions(h({ "If-Match": 'W/"abc"' }), "GET", v)).toBe("failed");
    expect(evaluatePreconditions(h({ "If-Match": "*" }), "GET", v)).toBe("proceed");
    expect(evaluatePreconditions(h({ "If-Match": '"nope"' }), "GET", v)).toBe("failed");
  });
  it("dates at one-second resolution; If-None-Match wins over If-Modified-Since; bad dates are ignored", () => {
    const lm = "Fri, 01 May 2026 10:00:00 GMT";
    expect(evaluatePreconditions(h({ "If-Modified-Since": lm }), "GET", v)).toBe("not-modified");
    expect(evaluatePreconditions(h({ "If-Modified-Since": "Fri, 01 May 2026 09:59:59 GMT" }), "GET", v)).toBe(
      "proceed",
    );
    expect(evaluatePreconditions(h({ "If-Modified-Since": lm, "If-None-Match": '"x"' }), "GET", v)).toBe(
      "proceed",
    );
    expect(evaluatePreconditions(h({ "If-Modified-Since": "yesterday-ish" }), "GET", v)).toBe("proceed");
    expect(
      evaluatePreconditions(h({ "If-Unmodified-Since": "Fri, 01 May 2026 09:59:59 GMT" }), "GET", v),
    ).toBe("failed");
    expect(evaluatePreconditions(h({ "If-Unmodified-Since": lm }), "GET", v)).toBe("proceed");
    // If-Match present: If-Unmodified-Since is not evaluated.
    expect(
      evaluatePreconditions(
        h({ "If-Match": '"abc"', "If-Unmodified-Since": "Thu, 01 Jan 2026 00:00:00 GMT" }),
        "GET",
        v,
      ),
    ).toBe("proceed");
  });
  it("If-Range: a strong ETag or the exact Last-Modified", () => {
    expect(ifRangeHolds(h({}), v)).toBe(true);
    expect(ifRangeHolds(h({ "If-Range": '"abc"' }), v)).toBe(true);
    expect(ifRangeHolds(h({ "If-Range": 'W/"abc"' }), v)).toBe(false);
    expect(ifRangeHolds(h({ "If-Range": "Fri, 01 May 2026 10:00:00 GMT" }), v)).toBe(true);
    expect(ifRangeHolds(h({ "If-Range": "Fri, 01 May 2026 09:00:00 GMT" }), v)).toBe(false);
  });
});
