import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  amzDate,
  amzShortDate,
  credentialScope,
  deriveSigningKey,
  hmacHex,
  sha256Hex,
  timingSafeEqualBytes,
  timingSafeEqualHex,
  toHex,
} from "../../src/s3/sigv4";
import { AWS_EXAMPLE } from "./vectors";

describe("sigv4 helpers", () => {
  it("reproduces AWS's sigv4-post-example signature byte for byte", async () => {
    const key = await deriveSigningKey(AWS_EXAMPLE.secretAccessKey, AWS_EXAMPLE.date, AWS_EXAMPLE.region);
    expect(await hmacHex(key, AWS_EXAMPLE.policy)).toBe(AWS_EXAMPLE.signature);
  });

  it("derives the signing key like an independent HMAC implementation (node:crypto)", async () => {
    const h = (k: string | Buffer, d: string) => createHmac("sha256", k).update(d).digest();
    for (const [secret, date, region, service] of [
      [AWS_EXAMPLE.secretAccessKey, "20151229", "us-east-1", "s3"],
      ["test-secret-access-key-0000000000000000000", "20260101", "auto", "s3"],
      ["wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20120215", "us-east-1", "iam"],
    ]) {
      const expected = h(h(h(h(`AWS4${secret}`, date), region), service), "aws4_request").toString("hex");
      expect(toHex(await deriveSigningKey(secret, date, region, service))).toBe(expected);
    }
  });

  it("matches the SigV4 signing-key example of the AWS general reference (iam, 20120215)", async () => {
    // AWS General Reference, "Examples of how to derive a signing key for Signature Version 4".
    const key = await deriveSigningKey(
      "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
      "20120215",
      "us-east-1",
      "iam",
    );
    expect(toHex(key)).toBe("f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
  });

  it("hashes with SHA-256", async () => {
    expect(await sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(await sha256Hex(new Uint8Array([0x61, 0x62, 0x63]))).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });

  it("formats x-amz-date and the credential scope", () => {
    const d = new Date(Date.UTC(2015, 11, 29, 0, 0, 0));
    expect(amzDate(d)).toBe("20151229T000000Z");
    expect(amzShortDate(d)).toBe("20151229");
    expect(amzDate(new Date("2026-03-04T05:06:07.890Z"))).toBe("20260304T050607Z");
    expect(credentialScope("20151229", "us-east-1")).toBe("20151229/us-east-1/s3/aws4_request");
    expect(() => amzDate(new Date(Number.NaN))).toThrow(RangeError);
  });

  it("compares hex strings in constant time", () => {
    const a = "8afdbf4008c03f22c2cd3cdb72e4afbb1f6a588f3255ac628749a66d7f09699e";
    expect(timingSafeEqualHex(a, a)).toBe(true);
    expect(timingSafeEqualHex(a, `${a.slice(0, -1)}f`)).toBe(false);
    expect(timingSafeEqualHex(a, a.slice(0, -2))).toBe(false);
    expect(timingSafeEqualHex(a, a.toUpperCase())).toBe(false);
    expect(timingSafeEqualHex("", "")).toBe(true);
    expect(timingSafeEqualHex("", "00")).toBe(false);
  });

  it("uses workerd's crypto.subtle.timingSafeEqual, and has a manual fallback", () => {
    const subtle = crypto.subtle as SubtleCrypto & { timingSafeEqual?: unknown };
    expect(typeof subtle.timingSafeEqual).toBe("function");
    const original = Object.getOwnPropertyDescriptor(subtle, "timingSafeEqual");
    Object.defineProperty(subtle, "timingSafeEqual", {
      value: undefined,
      configurable: true,
      writable: true,
    });
    try {
      expect(typeof subtle.timingSafeEqual).toBe("undefined");
      expect(timingSafeEqualBytes(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3]))).toBe(true);
      expect(timingSafeEqualBytes(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4]))).toBe(false);
      expect(timingSafeEqualBytes(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2]))).toBe(false);
    } finally {
      if (original) Object.defineProperty(subtle, "timingSafeEqual", original);
      else delete (subtle as { timingSafeEqual?: unknown }).timingSafeEqual;
    }
    expect(typeof subtle.timingSafeEqual).toBe("function");
  });
});
