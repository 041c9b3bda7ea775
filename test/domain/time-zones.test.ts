import { describe, expect, it } from "vitest";
import { TIME_ZONE_NAMES } from "../../src/domain/data/time-zone-names";
import { isTimeZone } from "../../src/domain/time-zones";

describe("the time zone names the document lists (issue 46)", () => {
  it("are each one the runtime takes", () => {
    expect(TIME_ZONE_NAMES.filter((z) => !isTimeZone(z))).toEqual([]);
  });

  it("name every zone the runtime lists, once each", () => {
    const listed = new Set(TIME_ZONE_NAMES);
    expect(listed.size).toBe(TIME_ZONE_NAMES.length);
    expect(Intl.supportedValuesOf("timeZone").filter((z) => !listed.has(z))).toEqual([]);
    expect(listed.has("UTC")).toBe(true);
  });
});
