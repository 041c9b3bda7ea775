import { exports } from "cloudflare:workers";
import { expect, it } from "vitest";

it("serves", async () => {
  const res = await exports.default.fetch("http://x/");
  expect(res.status).toBe(200);
});
