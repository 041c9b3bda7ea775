import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { addUser, call, expectStatus, newAccount, signIn } from "../helpers";
import { createTask } from "../tasks/helpers";
import { jwtPayload } from "../users/helpers";

// GET /tasks/{id}/ reads the token's row and the task in one D1 batch, the task for the account
// the token claims (http/first-batch.ts). These pin what that must never change: nothing is
// answered for a token that does not hold, and a claim is only a hint.

/** The key the tests sign with (vitest.config.ts, JWT_SECRETS: `test-2` signs). */
const TEST_KEY = Uint8Array.from(atob("dGVzdC1rZXktdHdvLXRlc3Qta2V5LXR3by10ZXN0LWtleQ=="), (c) =>
  c.charCodeAt(0),
);

/** The same session token re-signed with other claims (what only the service could mint). */
function resigned(token: string, claims: Record<string, unknown>) {
  const { acc: _acc, ...kept } = jwtPayload(token);
  return new SignJWT({ ...kept, ...claims })
    .setProtectedHeader({ alg: "HS256", kid: "test-2", typ: "session+jwt" })
    .sign(TEST_KEY);
}

const getTask = (id: string, token: string, opts: { version?: string } = {}) =>
  call(`/tasks/${id}/`, { token, ...opts });

describe("GET /tasks/{id}/ with the token's check in its first batch", () => {
  it("session tokens claim the account they act in (acc), hijack tokens the admin's", async () => {
    const acc = await newAccount();
    expect(jwtPayload(acc.admin.token).acc).toBe(acc.account.id);
    const worker = await addUser(acc, "worker");
    expect(jwtPayload(worker.token).acc).toBe(acc.account.id);
    const hijack = await call(`/users/${worker.userId}/hijack/`, { method: "POST", token: acc.admin.token });
    expectStatus(hijack, 200);
    expect(jwtPayload(hijack.body.token).acc).toBe(acc.account.id);
  });

  it("a claim of another account reads nothing there: the task is read again for the token's own", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const ownTask = await createTask(a);
    const otherTask = await createTask(b);
    // A's admin, claiming B's account (and, without any claim, an older session token).
    for (const token of [
      await resigned(a.admin.token, { acc: b.account.id }),
      await resigned(a.admin.token, {}),
    ]) {
      const own = await getTask(ownTask.id, token);
      expectStatus(own, 200);
      expect(own.body.id).toBe(ownTask.id);
      expectStatus(await getTask(otherTask.id, token), 404);
      // Twice: the second request of an isolate may start from what the first one learnt.
      expectStatus(await getTask(ownTask.id, token), 200);
      expectStatus(await getTask(otherTask.id, token), 404);
    }
  });

  it("a revoked, expired or forged token is 401 whatever the task read found", async () => {
    const acc = await newAccount();
    const task = await createTask(acc);
    const forged = `${acc.admin.token.slice(0, -4)}AAAA`;
    for (const path of [task.id, crypto.randomUUID(), "not-a-uuid"]) {
      expectStatus(await getTask(path, forged), 401);
    }
    const session = await signIn(acc.admin.email, acc.admin.password);
    expectStatus(await getTask(task.id, session.token), 200);
    expectStatus(await call("/logout/", { method: "POST", token: session.token }), 204);
    // Revocation takes effect on the next request, on every answer the route could give.
    for (const path of [task.id, crypto.randomUUID(), "not-a-uuid"]) {
      const r = await getTask(path, session.token);
      expectStatus(r, 401);
      expect(r.headers.get("WWW-Authenticate")).toBeTruthy();
    }
    const expired = await resigned(acc.admin.token, { exp: Math.floor(Date.now() / 1000) - 1 });
    expectStatus(await getTask(task.id, expired), 401);
  });

  it("a worker reads only the tasks assigned to it; a legacy access token reads as before", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const mine = await createTask(acc, { assignee: worker.user });
    const notMine = await createTask(acc);
    expectStatus(await getTask(mine.id, worker.token), 200);
    expectStatus(await getTask(notMine.id, worker.token), 404);
    const legacy = await call("/authenticate/", {
      version: "2.9.0",
      body: { username: worker.email, password: worker.password },
    });
    expectStatus(legacy, 200);
    for (let i = 0; i < 2; i++) {
      expectStatus(await call(`/tasks/${mine.id}/`, { token: legacy.body.token, scheme: "Token" }), 200);
      expectStatus(await call(`/tasks/${notMine.id}/`, { token: legacy.body.token, scheme: "Token" }), 404);
    }
  });

  it("answers with the account's pinned version, and the unslashed path follows it", async () => {
    const acc = await newAccount();
    const task = await createTask(acc);
    const pinned = await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { api_version: "2.9.0" },
    });
    expectStatus(pinned, 200);
    const r = await getTask(task.id, acc.admin.token);
    expectStatus(r, 200);
    expect(r.headers.get("X-API-Version")).toBe("2.9.0");
    expectStatus(await call(`/tasks/${task.id}`, { token: acc.admin.token }), 200);
    expectStatus(await call(`/tasks/${task.id}`, { token: acc.admin.token, version: "2.11.4" }), 404);
    expect(
      (await getTask(task.id, acc.admin.token, { version: "2.11.4" })).headers.get("X-API-Version"),
    ).toBe("2.11.4");
  });
});
