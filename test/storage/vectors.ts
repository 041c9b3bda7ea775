// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${filename}` is S3's literal form variable here.
/**
 * AWS's published test vector for SigV4 POST: S3 API reference, "Example: Browser-Based
 * Upload using HTTP POST (Using AWS Signature Version 4)"
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-post-example.html).
 *
 * The page shows the policy as JSON and says "it should have carriage returns and new lines
 * for your computed hash to match this value (ie. ASCII text, with CRLF line terminators)",
 * then gives the base64 of that exact text (the string to sign) and the signature.
 * `policyJson` below is the page's JSON with CRLF line ends; the test checks that `policy`
 * decodes to it byte for byte.
 */
export const AWS_EXAMPLE = {
  accessKeyId: "AKIAIOSFODNN7EXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  region: "us-east-1",
  date: "20151229",
  bucket: "sigv4examplebucket",
  policy:
    "eyAiZXhwaXJhdGlvbiI6ICIyMDE1LTEyLTMwVDEyOjAwOjAwLjAwMFoiLA0KICAiY29uZGl0aW9ucyI6IFsNCiAgICB7ImJ1Y2tldCI6ICJzaWd2NGV4YW1wbGVidWNrZXQifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRrZXkiLCAidXNlci91c2VyMS8iXSwNCiAgICB7ImFjbCI6ICJwdWJsaWMtcmVhZCJ9LA0KICAgIHsic3VjY2Vzc19hY3Rpb25fcmVkaXJlY3QiOiAiaHR0cDovL3NpZ3Y0ZXhhbXBsZWJ1Y2tldC5zMy5hbWF6b25hd3MuY29tL3N1Y2Nlc3NmdWxfdXBsb2FkLmh0bWwifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRDb250ZW50LVR5cGUiLCAiaW1hZ2UvIl0sDQogICAgeyJ4LWFtei1tZXRhLXV1aWQiOiAiMTQzNjUxMjM2NTEyNzQifSwNCiAgICB7IngtYW16LXNlcnZlci1zaWRlLWVuY3J5cHRpb24iOiAiQUVTMjU2In0sDQogICAgWyJzdGFydHMtd2l0aCIsICIkeC1hbXotbWV0YS10YWciLCAiIl0sDQoNCiAgICB7IngtYW16LWNyZWRlbnRpYWwiOiAiQUtJQUlPU0ZPRE5ON0VYQU1QTEUvMjAxNTEyMjkvdXMtZWFzdC0xL3MzL2F3czRfcmVxdWVzdCJ9LA0KICAgIHsieC1hbXotYWxnb3JpdGhtIjogIkFXUzQtSE1BQy1TSEEyNTYifSwNCiAgICB7IngtYW16LWRhdGUiOiAiMjAxNTEyMjlUMDAwMDAwWiIgfQ0KICBdDQp9",
  signature: "8afdbf4008c03f22c2cd3cdb72e4afbb1f6a588f3255ac628749a66d7f09699e",
  policyJson: [
    '{ "expiration": "2015-12-30T12:00:00.000Z",',
    '  "conditions": [',
    '    {"bucket": "sigv4examplebucket"},',
    '    ["starts-with", "$key", "user/user1/"],',
    '    {"acl": "public-read"},',
    '    {"success_action_redirect": "http://sigv4examplebucket.s3.amazonaws.com/successful_upload.html"},',
    '    ["starts-with", "$Content-Type", "image/"],',
    '    {"x-amz-meta-uuid": "14365123651274"},',
    '    {"x-amz-server-side-encryption": "AES256"},',
    '    ["starts-with", "$x-amz-meta-tag", ""],',
    "",
    '    {"x-amz-credential": "AKIAIOSFODNN7EXAMPLE/20151229/us-east-1/s3/aws4_request"},',
    '    {"x-amz-algorithm": "AWS4-HMAC-SHA256"},',
    '    {"x-amz-date": "20151229T000000Z" }',
    "  ]",
    "}",
  ].join("\r\n"),
  /**
   * The page's upload form, in its order and spelling (mixed-case X-Amz-* and Policy against
   * lowercase conditions: "The post parameters are case insensitive."). The `file` part and
   * the `submit` input after it are not fields.
   */
  formFields: [
    ["key", "user/user1/${filename}"],
    ["acl", "public-read"],
    ["success_action_redirect", "http://sigv4examplebucket.s3.amazonaws.com/successful_upload.html"],
    ["Content-Type", "image/jpeg"],
    ["x-amz-meta-uuid", "14365123651274"],
    ["x-amz-server-side-encryption", "AES256"],
    ["X-Amz-Credential", "AKIAIOSFODNN7EXAMPLE/20151229/us-east-1/s3/aws4_request"],
    ["X-Amz-Algorithm", "AWS4-HMAC-SHA256"],
    ["X-Amz-Date", "20151229T000000Z"],
    ["x-amz-meta-tag", ""],
    [
      "Policy",
      "eyAiZXhwaXJhdGlvbiI6ICIyMDE1LTEyLTMwVDEyOjAwOjAwLjAwMFoiLA0KICAiY29uZGl0aW9ucyI6IFsNCiAgICB7ImJ1Y2tldCI6ICJzaWd2NGV4YW1wbGVidWNrZXQifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRrZXkiLCAidXNlci91c2VyMS8iXSwNCiAgICB7ImFjbCI6ICJwdWJsaWMtcmVhZCJ9LA0KICAgIHsic3VjY2Vzc19hY3Rpb25fcmVkaXJlY3QiOiAiaHR0cDovL3NpZ3Y0ZXhhbXBsZWJ1Y2tldC5zMy5hbWF6b25hd3MuY29tL3N1Y2Nlc3NmdWxfdXBsb2FkLmh0bWwifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRDb250ZW50LVR5cGUiLCAiaW1hZ2UvIl0sDQogICAgeyJ4LWFtei1tZXRhLXV1aWQiOiAiMTQzNjUxMjM2NTEyNzQifSwNCiAgICB7IngtYW16LXNlcnZlci1zaWRlLWVuY3J5cHRpb24iOiAiQUVTMjU2In0sDQogICAgWyJzdGFydHMtd2l0aCIsICIkeC1hbXotbWV0YS10YWciLCAiIl0sDQoNCiAgICB7IngtYW16LWNyZWRlbnRpYWwiOiAiQUtJQUlPU0ZPRE5ON0VYQU1QTEUvMjAxNTEyMjkvdXMtZWFzdC0xL3MzL2F3czRfcmVxdWVzdCJ9LA0KICAgIHsieC1hbXotYWxnb3JpdGhtIjogIkFXUzQtSE1BQy1TSEEyNTYifSwNCiAgICB7IngtYW16LWRhdGUiOiAiMjAxNTEyMjlUMDAwMDAwWiIgfQ0KICBdDQp9",
    ],
    ["X-Amz-Signature", "8afdbf4008c03f22c2cd3cdb72e4afbb1f6a588f3255ac628749a66d7f09699e"],
  ] as [string, string][],
};
