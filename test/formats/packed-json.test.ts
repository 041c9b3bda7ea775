import { describe, expect, it } from "vitest";
import { packJson, unpackJson, unpackJsonText } from "../../src/formats/packed-json";

// What the service stored before packing moved from fflate to the runtime's zlib: the same
// value, packed by the fflate code (format byte 1, raw DEFLATE with dictionary v1).
const PACKED_BY_FFLATE =
  "AYNmIQNDS+NEwyQj3WTjFBNd81TTNF2LRMskXYNkwxSjVOM0k0TTZIxslliQqZdakQiKRD1gCiiBZjtizCIp86FGfUAisE7J0VHISU0sS1VILFEoyUhVSAHmHoVHcyaDahe0qMAMMENDXSOzEANLlIAAAA==";
const VALUE = {
  id: "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c",
  url: "https://api.example.test/tasks/0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c/",
  state: "assigned",
  category: "drop_off",
  description: "Parcel, leave at the door ✓",
  metafields: {},
  created_at: "2026-11-26T09:00:00.000Z",
};
const bytes = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

describe("event payloads as stored (contract §23)", () => {
  it("round-trips a value, smaller than its JSON, in every shape D1 answers a BLOB in", () => {
    const packed = packJson(VALUE);
    expect(packed[0]).toBe(1);
    expect(packed.length).toBeLessThan(JSON.stringify(VALUE).length / 2);
    expect(unpackJson(packed)).toEqual(VALUE);
    expect(unpackJson(packed.buffer.slice(packed.byteOffset, packed.byteOffset + packed.length))).toEqual(
      VALUE,
    );
    expect(unpackJson(Array.from(packed))).toEqual(VALUE);
  });

  it("reads payloads packed before (fflate) and JSON text stored before packing", () => {
    expect(unpackJson(bytes(PACKED_BY_FFLATE))).toEqual(VALUE);
    expect(unpackJsonText(JSON.stringify(VALUE))).toBe(JSON.stringify(VALUE));
  });

  it("refuses a format it does not know rather than guessing", () => {
    expect(() => unpackJson(Uint8Array.of(9, 1, 2))).toThrow(/Unknown packed JSON format/);
  });
});
