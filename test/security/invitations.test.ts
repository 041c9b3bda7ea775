import { describe, expect, it } from "vitest";
import { addUser, call, expectStatus, newAccount, signIn, uniqueEmail } from "../helpers";
import { stored } from "../stored";

/** The activation token of the newest activation e-mail to `to`, read through GET /outbox/. */
async function activationToken(adminToken: string, to: string): Promise<string> {
  const r = await call("/outbox/?page_size=500", { token: adminToken });
  expectStatus(r, 200);
  const mail = r.body.results.filter((m: any) => m.to === to && m.kind === "activation").at(-1);
  expect(mail, "activation e-mail").toBeTruthy();
  return /token: (\S+)/.exec(mail.text)![1];
}

/** Strips what necessarily differs between two answers (ids, e-mails, times). */
const shape = (b: any) =>
  Object.fromEntries(
    Object.entries(b).map(([k, v]) => [
      k,
      ["id", "url", "email", "created_at", "updated_at", "user"].includes(k) ? typeof v : v,
    ]),
  );

describe("invitations (a user in several accounts)", () => {
  it("answers POST /users/ the same for a registered and a new e-mail; the invitation grants nothing until accepted", async () => {
    const a = await newAccount("A");
    const b = await newAccount("B");
    const fresh = uniqueEmail("fresh");
    const invited = await call("/users/", {
      token: a.admin.token,
      body: { email: b.admin.email, name: "X", role: "worker" },
    });
    const created = await call("/users/", {
      token: a.admin.token,
      body: { email: fresh, name: "X", role: "worker" },
    });
    expectStatus(invited, 201);
    expectStatus(created, 201);
    expect(shape(invited.body)).toEqual(shape(created.body));

    // Neither user is visible in A yet (both roles pending).
    expectStatus(await call(`/users/${invited.body.id}/`, { token: a.admin.token }), 404);
    expectStatus(await call(`/users/${created.body.id}/`, { token: a.admin.token }), 404);
    const roles = await call("/account_roles/", { token: a.admin.token });
    const pending = roles.body.results.filter((r: any) => r.state === "pending");
    expect(pending.map((r: any) => r.user).sort()).toEqual([invited.body.url, created.body.url].sort());

    // B's admin has no role in A until accepting.
    const authz = await call("/session_tokens/authorize/", {
      token: b.admin.token,
      body: { account: a.account.url },
    });
    expectStatus(authz, 400);
    const role = pending.find((r: any) => r.user === invited.body.url);
    // Only the invited user may accept: A's admin cannot accept on their behalf.
    expectStatus(
      await call(`/account_roles/${role.id}/accept/`, { method: "POST", token: a.admin.token }),
      404,
    );
    const accepted = await call(`/account_roles/${role.id}/accept/`, {
      method: "POST",
      token: b.admin.token,
    });
    expectStatus(accepted, 200);
    expect(accepted.body.state).toBe("active");
    expectStatus(
      await call("/session_tokens/authorize/", { token: b.admin.token, body: { account: a.account.url } }),
      200,
    );
    // The invitation was an e-mail through the one outbound interface.
    const mail = await stored
      .prepare("SELECT * FROM outbound_emails WHERE to_address = ? AND kind = 'invitation'")
      .bind(b.admin.email)
      .first<any>();
    expect(mail.text).toContain(`/account_roles/${role.id}/accept/`);
  });

  it("answers POST /account_roles/ the same for a registered and a new e-mail", async () => {
    const a = await newAccount("A");
    const b = await newAccount("B");
    const r1 = await call("/account_roles/", {
      token: a.admin.token,
      body: { email: b.admin.email, role: "manager" },
    });
    const r2 = await call("/account_roles/", {
      token: a.admin.token,
      body: { email: uniqueEmail("n"), role: "manager" },
    });
    expectStatus(r1, 201);
    expectStatus(r2, 201);
    expect(shape(r1.body)).toEqual(shape(r2.body));
    expect(r1.body.state).toBe("pending");
    // A user of another account named by URL does not exist for this account.
    const c = await newAccount("C");
    const byUrl = await call("/account_roles/", {
      token: a.admin.token,
      body: { user: c.admin.user, role: "worker" },
    });
    expectStatus(byUrl, 400);
    expect(byUrl.body.user[0]).toMatch(/does not exist/);
  });

  it("answers sign-up with a registered e-mail as with a new one, and invites that user instead", async () => {
    const b = await newAccount("B");
    const r = await call("/accounts/", {
      body: { name: "Squat", email: b.admin.email, password: "attacker-password" },
    });
    expectStatus(r, 201);
    expectStatus(
      await call("/authenticate/", { body: { username: b.admin.email, password: "attacker-password" } }),
      400,
    );
    // B's admin is still who they were and holds only a pending role in the new account.
    expectStatus(
      await call("/session_tokens/authorize/", { token: b.admin.token, body: { account: r.body.url } }),
      400,
    );
  });

  it("activates a new user with a single-use token from the activation e-mail", async () => {
    const a = await newAccount("A");
    const email = uniqueEmail("new");
    const created = await call("/users/", {
      token: a.admin.token,
      body: { email, name: "New", role: "worker" },
    });
    expectStatus(created, 201);
    // No password yet: no sign-in.
    expectStatus(
      await call("/authenticate/", { body: { username: email, password: "chosen password 1" } }),
      400,
    );
    const token = await activationToken(a.admin.token, email);
    const bad = await call("/users/activate/", { body: { token: "nope", password: "chosen password 1" } });
    expectStatus(bad, 400);
    expect(bad.body.token).toBeTruthy();
    expectStatus(await call("/users/activate/", { body: { token, password: "chosen password 1" } }), 204);
    expectStatus(await call("/users/activate/", { body: { token, password: "chosen password 2" } }), 400);
    const worker = await signIn(email, "chosen password 1");
    const me = await call("/users/me/", { token: worker.token });
    expect(me.body.role).toBe("worker");
    expectStatus(await call(`/users/${created.body.id}/`, { token: a.admin.token }), 200);
    // Stored hashed, never in clear.
    const row = await stored
      .prepare("SELECT token_hash, used_at FROM user_tokens WHERE user_id = ?")
      .bind(created.body.id)
      .first<any>();
    expect(row.token_hash).not.toBe(token);
    expect(row.used_at).not.toBeNull();
  });

  it("refuses an expired activation token", async () => {
    const a = await newAccount("A");
    const email = uniqueEmail("late");
    const created = await call("/users/", { token: a.admin.token, body: { email, role: "worker" } });
    const token = await activationToken(a.admin.token, email);
    await stored
      .prepare("UPDATE user_tokens SET expires_at = ? WHERE user_id = ?")
      .bind(Date.now() - 1, created.body.id)
      .run();
    expectStatus(await call("/users/activate/", { body: { token, password: "chosen password 1" } }), 400);
  });

  it("shows the outbox to admins only, and only their account's messages", async () => {
    const a = await newAccount("A");
    const b = await newAccount("B");
    await call("/users/", { token: b.admin.token, body: { email: uniqueEmail("b"), role: "worker" } });
    const worker = await addUser(a, "worker");
    expectStatus(await call("/outbox/", { token: worker.token }), 403);
    const r = await call("/outbox/", { token: a.admin.token });
    expectStatus(r, 200);
    expect(r.body.results).toEqual([]);
  });
});

describe("the cross-account takeover", () => {
  it("an admin cannot change password, e-mail or activity of a user who also belongs to another account", async () => {
    const a = await newAccount("A");
    const b = await newAccount("B");
    const invite = await call("/account_roles/", {
      token: a.admin.token,
      body: { email: b.admin.email, role: "worker" },
    });
    expectStatus(invite, 201);
    // Pending: not even visible.
    const patchPending = await call(`/users/${b.admin.userId}/`, {
      method: "PATCH",
      token: a.admin.token,
      body: { password: "taken over!!" },
    });
    expectStatus(patchPending, 404);
    expectStatus(
      await call(`/account_roles/${invite.body.id}/accept/`, { method: "POST", token: b.admin.token }),
      200,
    );
    for (const body of [{ password: "taken over!!" }, { email: uniqueEmail("evil") }, { is_active: false }]) {
      const r = await call(`/users/${b.admin.userId}/`, { method: "PATCH", token: a.admin.token, body });
      expectStatus(r, 403);
    }
    // B's admin still signs in with their own password and is active.
    await signIn(b.admin.email, b.admin.password);
    // The role's is_active disables the user in A alone.
    const off = await call(`/account_roles/${invite.body.id}/`, {
      method: "PATCH",
      token: a.admin.token,
      body: { is_active: false },
    });
    expectStatus(off, 200);
    expectStatus(
      await call("/session_tokens/authorize/", { token: b.admin.token, body: { account: a.account.url } }),
      400,
    );
    expectStatus(await call("/users/me/", { token: b.admin.token }), 200);
  });

  it("an admin still manages users whose every role is in the admin's account", async () => {
    const a = await newAccount("A");
    const worker = await addUser(a, "worker");
    const r = await call(`/users/${worker.userId}/`, {
      method: "PATCH",
      token: a.admin.token,
      body: { password: "reset by admin 1", email: uniqueEmail("moved") },
    });
    expectStatus(r, 200);
    await signIn(r.body.email, "reset by admin 1");
  });
});
