import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, expectStatus, newAccount } from "../helpers";

/**
 * Nothing created during one request or event may be awaited by another (workerd refuses:
 * "This promise was created by a request that has since ended"). The cron's work once left a
 * module-level promise behind that every later anonymous request awaited, so each of them
 * answered 500 until the process restarted.
 */
type Scheduler = { scheduled(options: { cron: string }): Promise<unknown> };

describe("requests after the cron ran", () => {
  it("answer anonymous and authenticated requests normally, round after round", async () => {
    const acc = await newAccount();
    // A webhook gives the cron's sweeper and the relay after writes something to do.
    const hook = await call("/webhooks/", {
      token: acc.admin.token,
      body: { url: "https://hooks.example.test/in", events: [] },
    });
    expectStatus(hook, 201);
    for (let round = 0; round < 3; round++) {
      // The scheduled handler runs as its own event, as the runtime's cron would run it.
      await (exports.default as unknown as Scheduler).scheduled({ cron: "* * * * *" });
      const fixedIp = { "CF-Connecting-IP": "198.51.100.7" };
      // Concurrent requests of one client share the isolate's rate-limit state.
      const replies = await Promise.all([
        call("/openapi.json", { headers: fixedIp }),
        call("/tasks/", { headers: fixedIp }),
        call("/tasks/", { headers: fixedIp }),
        call("/tasks/", { headers: fixedIp }),
        call("/authenticate/", { body: { username: acc.admin.email, password: "wrong" }, headers: fixedIp }),
        call("/tasks/", { token: acc.admin.token }),
        call("/tasks/", {
          token: acc.admin.token,
          body: { account: acc.account.url, category: "drop_off", address: { raw_address: "Tallinn" } },
        }),
      ]);
      expect(replies.map((r) => r.status)).toEqual([200, 401, 401, 401, 400, 200, 201]);
    }
  });
});
