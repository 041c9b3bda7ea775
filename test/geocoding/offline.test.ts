import { describe, expect, it } from "vitest";
import { OfflineGeocoder } from "../../src/services/addresses/geocoding";
import { PLACE_COUNT } from "../../src/services/addresses/geocoding/data/places";
import {
  distanceKm,
  geocodeOffline,
  nearestPlace,
  placeAt,
  reverseOffline,
} from "../../src/services/addresses/geocoding/offline";

const geocoder = new OfflineGeocoder();

/** Asserts a GeoJSON point is within `km` of [lon, lat]. */
function expectNear(
  point: { type: string; coordinates: [number, number] } | undefined,
  lon: number,
  lat: number,
  km = 5,
) {
  expect(point?.type).toBe("Point");
  const [pLon, pLat] = point!.coordinates;
  expect(distanceKm(pLat, pLon, lat, lon)).toBeLessThan(km);
}

describe("offline geocoder: geocode", () => {
  it("is named offline", () => {
    expect(geocoder.name).toBe("offline");
  });

  it.each([
    ["London", -0.1276, 51.5072, "London, United Kingdom"],
    ["Paris", 2.3522, 48.8566, "Paris, France"],
    ["Tallinn", 24.7536, 59.437, "Tallinn, Estonia"],
    ["New York", -74.006, 40.7128, "New York City, NY, United States"],
    ["Tokyo", 139.6917, 35.6895, "Tokyo, Japan"],
    ["Sydney", 151.2093, -33.8688, "Sydney, NSW, Australia"],
    ["Buenos Aires", -58.3816, -34.6037, "Buenos Aires, Argentina"],
  ])("resolves %s", async (raw, lon, lat, formatted) => {
    const r = await geocoder.geocode(raw);
    expect(r?.formattedAddress).toBe(formatted);
    expectNear(r?.location, lon, lat, 10);
  });

  it("keeps the street part and names the country", async () => {
    const london = await geocoder.geocode("10 Downing Street, London, UK");
    expect(london?.formattedAddress).toBe("10 Downing Street, London, United Kingdom");
    expectNear(london?.location, -0.1276, 51.5072, 5);

    const paris = await geocoder.geocode("Rue de Rivoli 1, 75001 Paris, France");
    expect(paris?.formattedAddress).toBe("Rue de Rivoli 1, 75001 Paris, France");
    expectNear(paris?.location, 2.3522, 48.8566, 5);

    const tallinn = await geocoder.geocode("Narva mnt 5, 10117 Tallinn, Eesti");
    expect(tallinn?.formattedAddress).toBe("Narva mnt 5, 10117 Tallinn, Estonia");
    expectNear(tallinn?.location, 24.7536, 59.437, 5);

    const nyc = await geocoder.geocode("350 5th Ave, New York, NY 10001, USA");
    expect(nyc?.formattedAddress).toBe("350 5th Ave, New York City, NY 10001, United States");
    expectNear(nyc?.location, -74.006, 40.7128, 5);
  });

  it("appends the country (and a US/CA/AU region) when the address has none", async () => {
    expect((await geocoder.geocode("Main Street 1, Tartu"))?.formattedAddress).toBe(
      "Main Street 1, Tartu, Estonia",
    );
    expect((await geocoder.geocode("Springfield, IL"))?.formattedAddress).toBe(
      "Springfield, IL, United States",
    );
  });

  it("ignores case and accents", async () => {
    const expected = (await geocoder.geocode("Zürich"))!;
    expect(expected.formattedAddress).toBe("Zürich, Switzerland");
    for (const raw of ["ZURICH", "zurich", "  zürich  ", "ZÜRICH, schweiz"]) {
      expect((await geocoder.geocode(raw))?.location).toEqual(expected.location);
    }
    expect((await geocoder.geocode("sao paulo, brasil"))?.formattedAddress).toBe("São Paulo, Brazil");
    expect((await geocoder.geocode("MÜNCHEN"))?.formattedAddress).toBe("Munich, Germany");
  });

  it("prefers the larger place, unless the address names another country or region", async () => {
    expectNear((await geocoder.geocode("London"))?.location, -0.1276, 51.5072, 10);
    const ontario = await geocoder.geocode("London, Ontario, Canada");
    expect(ontario?.formattedAddress).toBe("London, Ontario, Canada");
    expectNear(ontario?.location, -81.2453, 42.9849, 10);

    expectNear((await geocoder.geocode("Paris"))?.location, 2.3522, 48.8566, 10);
    const texas = await geocoder.geocode("Paris, Texas");
    expect(texas?.formattedAddress).toBe("Paris, Texas, United States");
    expectNear(texas?.location, -95.5555, 33.6609, 10);

    expect((await geocoder.geocode("Atlanta, Georgia"))?.formattedAddress).toBe(
      "Atlanta, Georgia, United States",
    );
    expect((await geocoder.geocode("Tbilisi, Georgia"))?.formattedAddress).toBe("Tbilisi, Georgia");
    expect((await geocoder.geocode("Springfield, IL"))?.location.coordinates[0]).toBeCloseTo(-89.64, 1);
  });

  it("finds the town inside a segment without commas", async () => {
    expect((await geocoder.geocode("Tallinn Estonia"))?.formattedAddress).toBe("Tallinn, Estonia");
    const london = await geocoder.geocode("10 Downing Street London SW1A 2AA UK");
    expect(london?.formattedAddress).toBe("10 Downing Street London SW1A 2AA, United Kingdom");
    expectNear(london?.location, -0.1276, 51.5072, 5);
    expect((await geocoder.geocode("1012 AB Amsterdam"))?.formattedAddress).toBe(
      "1012 AB Amsterdam, Netherlands",
    );
  });

  it("knows other names and city-states", async () => {
    expect((await geocoder.geocode("Wien"))?.formattedAddress).toBe("Vienna, Austria");
    expect((await geocoder.geocode("Saint Louis, MO"))?.formattedAddress).toBe(
      "St. Louis, MO, United States",
    );
    expect((await geocoder.geocode("Washington, DC"))?.formattedAddress).toBe(
      "Washington, DC, United States",
    );
    expect((await geocoder.geocode("Singapore"))?.formattedAddress).toBe("Singapore, Singapore");
    expect((await geocoder.geocode("Mexico"))?.formattedAddress).toBe("Mexico City, Mexico");
  });

  it("returns null for what it does not know", async () => {
    for (const raw of [
      "asdfghjkl qwerty",
      "",
      "   ",
      ",,,",
      "12345",
      "Unknown Reading Room",
      "London, France",
    ]) {
      expect(await geocoder.geocode(raw)).toBeNull();
    }
    expect(geocodeOffline(undefined as unknown as string)).toBeNull();
  });

  it("stays quick on long input", async () => {
    const long = `${"Lorem ipsum dolor sit amet ".repeat(2000)}, Tallinn`;
    const started = Date.now();
    await geocoder.geocode(long);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe("offline geocoder: reverse", () => {
  it.each([
    [-0.1276, 51.5072, "London, United Kingdom"],
    [2.3522, 48.8566, "Paris, France"],
    [24.7536, 59.437, "Tallinn, Estonia"],
    [26.7225, 58.378, "Tartu, Estonia"],
    [139.6917, 35.6895, "Tokyo, Japan"],
  ])("names the town at %f, %f", async (lon, lat, formatted) => {
    const r = await geocoder.reverse(lon, lat);
    expect(r?.formattedAddress).toBe(formatted);
    // The location is the point that was asked about.
    expect(r?.location).toEqual({ type: "Point", coordinates: [lon, lat] });
  });

  it("names the city of a district", async () => {
    expect((await geocoder.reverse(13.4, 52.5))?.formattedAddress).toMatch(/, Berlin, Germany$/);
    expect((await geocoder.reverse(-73.99, 40.75))?.formattedAddress).toMatch(
      /New York City, NY, United States$/,
    );
  });

  it("gives distance and direction outside a town", async () => {
    expect((await geocoder.reverse(24.9, 59.3))?.formattedAddress).toMatch(
      /^\d+ km (N|NE|E|SE|S|SW|W|NW) of .+, Estonia$/,
    );
    const r = await geocoder.reverse(-179.9, -16.5); // across the antimeridian from Fiji's towns
    expect(r?.formattedAddress).toMatch(/ km [NESW]+ of .+, Fiji$/);
  });

  it("returns null far from any place, and for invalid coordinates", async () => {
    expect(await geocoder.reverse(0, 0)).toBeNull(); // Gulf of Guinea
    expect(await geocoder.reverse(-140, -50)).toBeNull(); // South Pacific
    expect(await geocoder.reverse(0, 90)).toBeNull();
    expect(await geocoder.reverse(Number.NaN, 10)).toBeNull();
    expect(await geocoder.reverse(10, 91)).toBeNull();
    expect(await geocoder.reverse(181, 10)).toBeNull();
  });

  it("honours a custom distance limit", async () => {
    expect(reverseOffline(24.9, 59.3, 5)).toBeNull();
    expect(await new OfflineGeocoder({ maxDistanceKm: 5000 }).reverse(0, 0)).not.toBeNull();
  });

  it("finds the same nearest place as a brute-force search", async () => {
    // Deterministic pseudo-random points, including high latitudes and the antimeridian.
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const all = Array.from({ length: PLACE_COUNT }, (_, i) => placeAt(i));
    const points: [number, number][] = [
      [179.99, -16.5],
      [-179.99, 65],
      [15.6, 78.2],
      [0, 89.9],
    ];
    for (let k = 0; k < 40; k++) points.push([random() * 360 - 180, random() * 150 - 60]);
    for (const [lon, lat] of points) {
      let best = -1;
      let bestKm = Number.POSITIVE_INFINITY;
      all.forEach((p, i) => {
        const d = distanceKm(lat, lon, p.lat, p.lon);
        if (d < bestKm) {
          best = i;
          bestKm = d;
        }
      });
      const found = nearestPlace(lon, lat);
      expect(found?.km).toBeCloseTo(bestKm, 6);
      expect(found?.place).toBe(best);
    }
  });
});
