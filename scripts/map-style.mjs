// The rule of src/domain/map-style.ts (which see), for the scripts that refuse a bad
// MAP_STYLE_URL before anything starts: npm run dev, npm run deploy, npm run check:config.
// test/web/serving.test.ts holds the two to the same answers.
export function mapStyleProblem(url) {
  if (!url) return null;
  let u;
  try {
    u = new URL(url);
  } catch {
    return `MAP_STYLE_URL is not a URL: ${JSON.stringify(url)}.`;
  }
  if (u.protocol !== "https:") return `MAP_STYLE_URL must be an https: URL, not ${u.protocol} (${url}).`;
  if (!u.hostname || u.hostname.includes("*"))
    return `MAP_STYLE_URL must name one concrete host, without a wildcard (${url}).`;
  if (u.username || u.password) return "MAP_STYLE_URL must not carry a user name or password.";
  return null;
}
