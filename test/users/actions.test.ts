import { afterEach, describe, expect, it, vi } from "vitest";
import { addUser, call, expectStatus, newAccount, uniqueEmail } from "../helpers";
import { mailedToken } from "./helpers";

const INVALID = { token: ["Invalid or expired token."] };
const HOUR = 3600 * 1000;

afterEach(() => {
  vi.useRealTimers();
});

/** Moves the clock of the service (same isolate as the test) without sleeping. */
function moveClock(ms: number) {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now() + ms);
}

describe("verify_email (contract §14)", () => {
  it("mails a single-use token that sets email_verified_at", async () => {
    const acc = await newAccount();
    const me = await call("/users/me/", { token: acc.admin.token });
    expect(me.body.email_verified_at).toBeNull();
    expectStatus(
      await call(`/users/${acc.admin.userId}/verify_email/`, { method: "POST", token: acc.admin.token }),
      204,
    );
    const token = await mailedToken(acc.admin.token, acc.admin.email, "email_verification");
    expectStatus(await call("/users/verify_email/confirm/", { body: { token } }), 204);
    const after = await call("/users/me/", { token: acc.admin.token });
    expect(after.body.email_verified_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    // Used once: the same token again is the one message.
    const again = await call("/users/verify_email/confirm/", { body: { token } });
    expectStatus(again, 400);
    expect(again.body).toEqual(INVALID);
  });

  it("re-sending invalidates the previous token; forged tokens get the same message", async () => {
    const acc = await newAccount();
    const path = `/users/${acc.admin.userId}/verify_email/`;
    await call(path, { method: "POST", token: acc.admin.token });
    const first = await mailedToken(acc.admin.token, acc.admin.email, "email_verification");
    await call(path, { method: "POST", token: acc.admin.token });
    const second = await mailedToken(acc.admin.token, acc.admin.email, "email_verification");
    expect(second).not.toBe(first);
    const stale = await call("/users/verify_email/confirm/", { body: { token: first } });
    expectStatus(stale, 400);
    expect(stale.body).toEqual(INVALID);
    const forged = await call("/users/verify_email/confirm/", {
      body: { token: `${second.slice(0, -2)}xx` },
    });
    expectStatus(forged, 400);
    expect(forged.body).toEqual(INVALID);
    expectStatus(await call("/users/verify_email/confirm/", { body: { token: second } }), 204);
  });

  it("expires after 24 hours (clock moved, not slept)", async () => {
    const acc = await newAccount();
    await call(`/users/${acc.admin.userId}/verify_email/`, { method: "POST", token: acc.admin.token });
    const token = await mailedToken(acc.admin.token, acc.admin.email, "email_verification");
    moveClock(24 * HOUR + 1000);
    const late = await call("/users/verify_email/confirm/", { body: { token } });
    expectStatus(late, 400);
    expect(late.body).toEqual(INVALID);
  });

  it("is still valid just under 24 hours", async () => {
    const acc = await newAccount();
    await call(`/users/${acc.admin.userId}/verify_email/`, { method: "POST", token: acc.admin.token });
    const token = await mailedToken(acc.admin.token, acc.admin.email, "email_verification");
    moveClock(24 * HOUR - 60_000);
    expectStatus(await call("/users/verify_email/confirm/", { body: { token } }), 204);
  });

  it("is for the user itself or an admin; other accounts' users are 404", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const manager = await addUser(acc, "manager");
    expectStatus(
      await call(`/users/${manager.userId}/verify_email/`, { method: "POST", token: worker.token }),
      403,
    );
    expectStatus(
      await call(`/users/${worker.userId}/verify_email/`, { method: "POST", token: worker.token }),
      204,
    );
    expectStatus(
      await call(`/users/${worker.userId}/verify_email/`, { method: "POST", token: acc.admin.token }),
      204,
    );
    const other = await newAccount();
    expectStatus(
      await call(`/users/${other.admin.userId}/verify_email/`, { method: "POST", token: acc.admin.token }),
      404,
    );
  });

  it("a changed e-mail is unverified again, and the old link verifies nothing", async () => {
    const acc = await newAccount();
    await call(`/users/${acc.admin.userId}/verify_email/`, { method: "POST", token: acc.admin.token });
    const token = await mailedToken(acc.admin.token, acc.admin.email, "email_verification");
    const patched = await call(`/users/${acc.admin.userId}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { email: uniqueEmail("moved"), current_password: acc.admin.password },
    });
    expectStatus(patched, 200);
    expect(patched.body.email_verified_at).toBeNull();
    expectStatus(await call("/users/verify_email/confirm/", { body: { token } }), 400);
  });
});

describe("activation and resend_activation_token (contract §14)", () => {
  async function pendingUser() {
    const acc = await newAccount();
    const email = uniqueEmail("new");
    const created = await call("/users/", { token: acc.admin.token, body: { email, role: "worker" } });
    expectStatus(created, 201);
    const roles = await call("/account_roles/?page_size=100", { token: acc.admin.token });
    const role = roles.body.results.find((r: any) => r.user === created.body.url);
    return { acc, email, role };
  }

  it("issues a fresh token and invalidates the old one", async () => {
    const { acc, email, role } = await pendingUser();
    const first = await mailedToken(acc.admin.token, email, "activation");
    const r = await call(`/account_roles/${role.id}/resend_activation_token/`, {
      method: "POST",
      token: acc.admin.token,
    });
    expectStatus(r, 204);
    const second = await mailedToken(acc.admin.token, email, "activation");
    expect(second).not.toBe(first);
    const stale = await call("/users/activate/", { body: { token: first, password: "chosen password 1" } });
    expectStatus(stale, 400);
    expect(stale.body).toEqual(INVALID);
    expectStatus(
      await call("/users/activate/", { body: { token: second, password: "chosen password 1" } }),
      204,
    );
    // Now active: a resend is 400 and mails nothing.
    const again = await call(`/account_roles/${role.id}/resend_activation_token/`, {
      method: "POST",
      token: acc.admin.token,
    });
    expectStatus(again, 400);
    expect(again.body).toEqual({ non_field_errors: ["This user is already active."] });
  });

  it("a registered user's pending invitation answers exactly as a new user's activation", async () => {
    const { acc, role } = await pendingUser();
    const other = await newAccount("Elsewhere");
    const invited = await call("/account_roles/", {
      token: acc.admin.token,
      body: { email: other.admin.email, role: "worker" },
    });
    expectStatus(invited, 201);
    const resend = (id: string) =>
      call(`/account_roles/${id}/resend_activation_token/`, { method: "POST", token: acc.admin.token });
    const forNew = await resend(role.id);
    const forRegistered = await resend(invited.body.id);
    expect({ status: forRegistered.status, body: forRegistered.text }).toEqual({
      status: forNew.status,
      body: forNew.text,
    });
    expectStatus(forRegistered, 204);
    // The registered user got the invitation again (never an activation link).
    const mails = (await call("/outbox/?page_size=500", { token: acc.admin.token })).body.results.filter(
      (m: any) => m.to === other.admin.email,
    );
    expect(mails.map((m: any) => m.kind)).toEqual(["invitation", "invitation"]);
  });

  it("activation tokens live 7 days (clock moved)", async () => {
    const { acc, email } = await pendingUser();
    const token = await mailedToken(acc.admin.token, email, "activation");
    moveClock(7 * 24 * HOUR + 1000);
    const late = await call("/users/activate/", { body: { token, password: "chosen password 1" } });
    expectStatus(late, 400);
    expect(late.body).toEqual(INVALID);
  });

  it("is for admins of the role's account only", async () => {
    const { acc, role } = await pendingUser();
    const manager = await addUser(acc, "manager");
    const path = `/account_roles/${role.id}/resend_activation_token/`;
    expectStatus(await call(path, { method: "POST", token: manager.token }), 403);
    const other = await newAccount();
    expectStatus(await call(path, { method: "POST", token: other.admin.token }), 404);
  });
});
