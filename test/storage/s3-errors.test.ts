import { describe, expect, it } from "vitest";
import { ByteLimitError, MultipartError } from "../../src/s3/multipart";
import {
  accessDenied,
  entityTooLarge,
  missingField,
  noFile,
  postResponseXml,
  S3Error,
  s3ErrorResponse,
  s3ErrorXml,
  toS3Error,
  xmlEscape,
} from "../../src/s3/s3-errors";

describe("S3 error XML", () => {
  it("writes S3's <Error> document", () => {
    expect(s3ErrorXml(accessDenied("Invalid according to Policy: Policy expired."), "req-1")).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code>' +
        "<Message>Invalid according to Policy: Policy expired.</Message><RequestId>req-1</RequestId></Error>",
    );
  });

  it("puts the details (in order) and the resource between Message and RequestId", () => {
    expect(s3ErrorXml(entityTooLarge(12, 10), "r", "/bucket/key")).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Error><Code>EntityTooLarge</Code>' +
        "<Message>Your proposed upload exceeds the maximum allowed size</Message>" +
        "<ProposedSize>12</ProposedSize><MaxSizeAllowed>10</MaxSizeAllowed>" +
        "<Resource>/bucket/key</Resource><RequestId>r</RequestId></Error>",
    );
    expect(s3ErrorXml(missingField("key"), "r")).toContain(
      "<ArgumentName>key</ArgumentName><ArgumentValue></ArgumentValue><RequestId>",
    );
  });

  it("escapes text, including what comes from the client", () => {
    const err = accessDenied('Invalid according to Policy: Extra input fields: <x a="1">&\'');
    expect(s3ErrorXml(err, "<id>")).toContain(
      "<Message>Invalid according to Policy: Extra input fields: &lt;x a=&quot;1&quot;&gt;&amp;&apos;</Message><RequestId>&lt;id&gt;</RequestId>",
    );
    expect(xmlEscape("a\u0000b\u001fc\td\r\ne\uffff")).toBe("a\ufffdb\ufffdc\td&#13;&#10;e\ufffd");
    expect(xmlEscape(42)).toBe("42");
  });

  it("answers a Response with S3's status and content type", async () => {
    const res = s3ErrorResponse(noFile(), "rid");
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/xml");
    expect(res.headers.get("x-amz-request-id")).toBe("rid");
    expect(await res.text()).toContain(
      "<Message>POST requires exactly one file upload per request.</Message>",
    );
  });

  it("writes the 201 PostResponse (quoted ETag, escaped text)", () => {
    expect(
      postResponseXml({
        location: "https://files.example.com/fileupload%2F1%2Fa%20%26%20b.jpg",
        bucket: "field-dispatch-files",
        key: "fileupload/1/a & b.jpg",
        etag: "14dd4667441ada2b3914e5c1b72573b3",
      }),
    ).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<PostResponse>' +
        "<Location>https://files.example.com/fileupload%2F1%2Fa%20%26%20b.jpg</Location>" +
        "<Bucket>field-dispatch-files</Bucket><Key>fileupload/1/a &amp; b.jpg</Key>" +
        "<ETag>&quot;14dd4667441ada2b3914e5c1b72573b3&quot;</ETag></PostResponse>",
    );
    expect(postResponseXml({ location: "l", bucket: "b", key: "k", etag: '"abc"' })).toContain(
      "<ETag>&quot;abc&quot;</ETag>",
    );
  });

  it("maps the parser's and limiter's errors to S3's codes", () => {
    const cases: [unknown, number, string][] = [
      [new MultipartError("malformed", "x"), 400, "MalformedPOSTRequest"],
      [new MultipartError("not-multipart", "x"), 412, "PreconditionFailed"],
      [new MultipartError("fields-too-large", "x", 65536), 400, "MaxPostPreDataLengthExceeded"],
      [new ByteLimitError("too-large", 11, 10), 400, "EntityTooLarge"],
      [new ByteLimitError("too-small", 1, 5), 400, "EntityTooSmall"],
      [accessDenied(), 403, "AccessDenied"],
      [new Error("boom"), 500, "InternalError"],
    ];
    for (const [err, status, code] of cases) {
      const s3 = toS3Error(err);
      expect(s3).toBeInstanceOf(S3Error);
      expect([s3.status, s3.code]).toEqual([status, code]);
    }
    expect(toS3Error(new MultipartError("fields-too-large", "x", 65536)).details).toEqual({
      MaxPostPreDataLengthBytes: 65536,
    });
    expect(toS3Error(new ByteLimitError("too-small", 1, 5)).details).toEqual({
      ProposedSize: 1,
      MinSizeAllowed: 5,
    });
  });
});
