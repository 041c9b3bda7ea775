import { describe, expect, it } from "vitest";
import { addUser, call, expectStatus, newAccount, signIn } from "../helpers";

/** A legacy `fda_` access token (before 2.10.0, /authenticate/ answers one). */
async function accessToken(email: string, password: string): Promise<string> {
  const r = await call("/authenticate/", { body: { username: email, password }, version: "2.9.0" });
  expectStatus(r, 200);
  expect(r.body.token).toMatch(/^fda_/);
  return r.body.token;
}

const me = (token: string) => call("/users/me/", { token });

describe("a password change or deactivation revokes the user's other credentials", () => {
  it("changing one's own password needs current_password and ends every other session and access token", async () => {
    const acc = await newAccount();
    const w = await addUser(acc, "worker");
    const other = await signIn(w.email, w.password);
    const legacy = await accessToken(w.email, w.password);
    const path = `/users/${w.userId}/`;
    const missing = await call(path, {
      method: "PATCH",
      token: w.token,
      body: { password: "a brand new password" },
    });
    expectStatus(missing, 400);
    expect(missing.body.current_password).toBeTruthy();
    const wrong = await call(path, {
      method: "PATCH",
      token: w.token,
      body: { password: "a brand new password", current_password: "not it" },
    });
    expectStatus(wrong, 400);
    expectStatus(await me(other.token), 200);
    const ok = await call(path, {
      method: "PATCH",
      token: w.token,
      body: { password: "a brand new password", current_password: w.password },
    });
    expectStatus(ok, 200);
    expectStatus(await me(w.token), 200);
    expectStatus(await me(other.token), 401);
    expectStatus(await me(legacy), 401);
    await signIn(w.email, "a brand new password");
  });

  it("an admin's password change ends every session of the user", async () => {
    const acc = await newAccount();
    const w = await addUser(acc, "worker");
    const legacy = await accessToken(w.email, w.password);
    const r = await call(`/users/${w.userId}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { password: "set by the admin" },
    });
    expectStatus(r, 200);
    expectStatus(await me(w.token), 401);
    expectStatus(await me(legacy), 401);
    expectStatus(await me(acc.admin.token), 200);
  });

  it("is_active: false ends every session of the user", async () => {
    const acc = await newAccount();
    const w = await addUser(acc, "manager");
    const legacy = await accessToken(w.email, w.password);
    expectStatus(
      await call(`/users/${w.userId}/`, {
        method: "PATCH",
        token: acc.admin.token,
        body: { is_active: false },
      }),
      200,
    );
    expectStatus(await me(w.token), 401);
    expectStatus(await me(legacy), 401);
    // Reactivated, the old tokens stay revoked.
    expectStatus(
      await call(`/users/${w.userId}/`, {
        method: "PATCH",
        token: acc.admin.token,
        body: { is_active: true },
      }),
      200,
    );
    expectStatus(await me(w.token), 401);
    await signIn(w.email, w.password);
  });
});
