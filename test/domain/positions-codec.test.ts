import { describe, expect, it } from "vitest";
import {
  decodeRecords,
  dequantize,
  encodeRecords,
  mergeByTime,
  type Quantized,
  quantize,
  SLICE_MS,
  sliceOf,
  thin,
} from "../../src/domain/positions-codec";

const slice = sliceOf(Date.UTC(2026, 10, 28, 9, 0, 0));
const t0 = slice * SLICE_MS;
/** A phone driving north-east, a position every 15 s, some without speed or heading. */
const drive = (n: number, from = 0): Quantized[] =>
  Array.from({ length: n }, (_, i) =>
    quantize({
      time: t0 + (from + i) * 15_000 + (i % 3),
      lat: 60.1699 + (from + i) * 0.0012,
      lon: 24.9384 + (from + i) * 0.0017,
      accuracy_m: 5 + (i % 4) * 2.5,
      speed_mps: i % 5 === 0 ? null : 11.3,
      heading_deg: i % 7 === 0 ? null : 359.9 - (i % 2) * 359,
    }),
  );

describe("positions codec (contract §28, migration 0038)", () => {
  it("decodes what it encodes, value for value", () => {
    const records = drive(240);
    const { bytes } = encodeRecords(slice, records);
    expect(decodeRecords(slice, bytes).records).toEqual(records);
  });

  it("appending after the stored records gives the bytes of encoding them all at once", () => {
    const all = drive(100);
    const first = encodeRecords(slice, all.slice(0, 37));
    const rest = encodeRecords(slice, all.slice(37), first.state);
    const whole = encodeRecords(slice, all);
    expect(Uint8Array.from([...first.bytes, ...rest.bytes])).toEqual(whole.bytes);
    expect(rest.state).toEqual(whole.state);
    expect(decodeRecords(slice, whole.bytes).state).toEqual(whole.state);
  });

  it("keeps a phone's trail under 16 bytes a position before any row overhead", () => {
    const { bytes } = encodeRecords(slice, drive(240));
    expect(bytes.length / 240).toBeLessThan(12);
  });

  it("keeps values to 1e-6 degree and tenths, and 360° as 0°", () => {
    const q = quantize({
      time: 1_800_000_000_123,
      lat: -33.8688197,
      lon: 151.2092955,
      accuracy_m: 3.14,
      speed_mps: 0,
      heading_deg: 360,
    });
    expect(dequantize(q)).toEqual({
      time: 1_800_000_000_123,
      lat: -33.86882,
      lon: 151.209296,
      accuracy_m: 3.1,
      speed_mps: 0,
      heading_deg: 0,
    });
  });

  it("refuses records out of time order (the store sorts them first)", () => {
    const [a, b] = drive(2);
    expect(() => encodeRecords(slice, [b, a])).toThrow();
  });

  it("thins positions closer than the interval to a stored one or to each other, in any order", () => {
    const stored = drive(3); // t0, t0+15 s, t0+30 s (plus a few ms)
    const at = (ms: number) => ({ ...stored[0], t: t0 + ms });
    const { kept, dropped } = thin(
      stored,
      [at(33_000), at(21_000), at(7_000), at(8_000), at(45_000), at(49_999)],
      5000,
    );
    // 33 s is 3 s from 30 s; 21 s and 7 s are 5 s or more from all; 8 s is 1 s from 7 s; 49.999 s is within 5 s of 45 s.
    expect(kept.map((q) => q.t - t0)).toEqual([7_000, 21_000, 45_000]);
    expect(dropped).toBe(3);
  });

  it("merges two time-ordered lists", () => {
    const all = drive(6);
    const merged = mergeByTime([all[0], all[2], all[5]], [all[1], all[3], all[4]]);
    expect(merged).toEqual(all);
  });
});
