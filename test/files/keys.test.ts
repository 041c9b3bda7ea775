import { describe, expect, it } from "vitest";
import { attachmentFileName, encodeKey, fileNameProblem, fileUrl, keyFromFilesPath } from "../../src/s3/keys";

describe("keys and file URLs", () => {
  it("percent-encodes each key segment and reads it back", () => {
    const key = "fileupload/0190/report final #2 (ü)%.pdf";
    const url = fileUrl("https://api.test", key);
    expect(url).toBe("https://api.test/files/fileupload/0190/report%20final%20%232%20(%C3%BC)%25.pdf");
    expect(keyFromFilesPath(new URL(url).pathname)).toBe(key);
    expect(encodeKey("a/b?c")).toBe("a/b%3Fc");
    expect(keyFromFilesPath("/files/a/%E0%A4%A")).toBeNull();
    expect(keyFromFilesPath("/files/")).toBeNull();
    expect(keyFromFilesPath("/other/x")).toBeNull();
  });

  it("accepts file names that are one path segment", () => {
    expect(fileNameProblem("Proof of delivery.JPG")).toBeNull();
    expect(fileNameProblem("ärge unustage.txt")).toBeNull();
    for (const bad of ["", ".", "..", "a/b", "a\\b", "a\nb", "x".repeat(256)])
      expect(fileNameProblem(bad)).not.toBeNull();
  });

  it("replaces spaces with underscores in attachment file names", () => {
    expect(attachmentFileName("my  photo 1.png")).toBe("my__photo_1.png");
  });
});
