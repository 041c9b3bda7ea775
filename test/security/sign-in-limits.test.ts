import { describe, expect, it } from "vitest";
import { addUser, call, expectStatus, newAccount, uniqueEmail } from "../helpers";
import { stored } from "../stored";

const ip = () => `198.51.100.${Math.floor(Math.random() * 250)}-${crypto.randomUUID()}`;

function guess(username: string, password: string, opts: { ip?: string; token?: string } = {}) {
  return call("/authenticate/", {
    body: { username, password },
    token: opts.token,
    headers: { "CF-Connecting-IP": opts.ip ?? ip() },
  });
}

describe("sign-in failure limits", () => {
  it("blocks a username after 10 failures, across tokens and addresses, even for the right password", async () => {
    const acc = await newAccount();
    const others = [acc.admin, await addUser(acc, "worker"), await addUser(acc, "manager")];
    for (let i = 0; i < 9; i++) {
      // Each guess from another address and with another valid token of the attacker's.
      expectStatus(await guess(acc.admin.email, `wrong ${i}`, { token: others[i % 3].token }), 400);
    }
    const tenth = await guess(acc.admin.email, "wrong 10");
    expectStatus(tenth, 429);
    expect(tenth.body.code).toBe("throttled");
    expect(Number(tenth.headers.get("Retry-After"))).toBeGreaterThan(0);
    const right = await guess(acc.admin.email, acc.admin.password);
    expectStatus(right, 429);
    expect(Number(right.headers.get("Retry-After"))).toBeGreaterThan(0);
    // Another user is not affected.
    expectStatus(await guess(others[1].email, others[1].password), 200);
  });

  it("blocks a client address after 10 failures, whatever usernames it tries", async () => {
    const addr = ip();
    for (let i = 0; i < 9; i++) expectStatus(await guess(uniqueEmail("nobody"), "pw", { ip: addr }), 400);
    expectStatus(await guess(uniqueEmail("nobody"), "pw", { ip: addr }), 429);
    const acc = await newAccount();
    expectStatus(await guess(acc.admin.email, acc.admin.password, { ip: addr }), 429);
    expectStatus(await guess(acc.admin.email, acc.admin.password), 200);
  });

  it("grows the back-off with each block in a row", async () => {
    const username = uniqueEmail("target");
    const retryAfter: number[] = [];
    for (let round = 0; round < 2; round++) {
      let last = await guess(username, "x");
      for (let i = 1; i < 10; i++) last = await guess(username, "x");
      expectStatus(last, 429);
      retryAfter.push(Number(last.headers.get("Retry-After")));
      // The block ends (as if its time had passed); the next failures block again, longer.
      await stored
        .prepare("UPDATE sign_in_failures SET blocked_until = ? WHERE key = ?")
        .bind(Date.now() - 1, `user:${username}`)
        .run();
    }
    expect(retryAfter[1]).toBeGreaterThan(retryAfter[0]);
  });

  it("a successful sign-in clears the username's count", async () => {
    const acc = await newAccount();
    for (let i = 0; i < 9; i++) expectStatus(await guess(acc.admin.email, "wrong"), 400);
    expectStatus(await guess(acc.admin.email, acc.admin.password), 200);
    expectStatus(await guess(acc.admin.email, "wrong"), 400);
  });
});
