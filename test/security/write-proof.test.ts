import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  checkToken,
  fieldsOf,
  proofGuard,
  proofHolds,
  proofStatement,
  type TokenRow,
} from "../../src/services/auth/tokens";
import { applySingle } from "../../src/services/task-commands";
import { insertTask } from "../factories";
import { addUser, call, expectStatus, newAccount, signIn } from "../helpers";
import { stored } from "../stored";

// A single command carries its token's check to the batch its task's object makes (a
// WriteProof, http/first-batch.ts): every write of the batch is guarded by the token's row, and
// the row is read only when the batch wrote nothing. These pin that a token that no longer holds
// writes nothing and learns nothing.

let n = 0;
const ext = () => `proof-${Date.now()}-${n++}-${crypto.randomUUID().slice(0, 6)}`;
const command = (taskUrl: string, externalId = ext()) => ({
  task: taskUrl,
  external_id: externalId,
  time: new Date().toISOString(),
  action: "update" as const,
  task_data: { position: 7 },
});
const storedCommand = (externalId: string) =>
  stored
    .prepare("SELECT state FROM task_commands WHERE external_id = ?")
    .bind(externalId)
    .first<{ state: string }>();
const opts = { timeZone: null, isArray: false, baseUrl: "https://api.test" };

/** The proof this isolate can carry for `token` once it has settled it (as a request would). */
async function proofOf(token: string) {
  const first = await checkToken(env, `Bearer ${token}`);
  first!.settle(await first!.statement.first<TokenRow>());
  const known = (await checkToken(env, `Bearer ${token}`))!.known;
  expect(known).not.toBeNull();
  return known!;
}

describe("a single command's token check, carried by its write", () => {
  it("writes with a token that holds, and writes nothing once it is revoked", async () => {
    const acc = await newAccount();
    const session = await signIn(acc.admin.email, acc.admin.password);
    const task = await insertTask(acc.account.id);
    const known = await proofOf(session.token);

    const ok = command(task.url);
    const applied = await applySingle(env, known.principal, ok, opts, known.proof);
    expect(applied.tokenMismatch).toBeUndefined();
    expect(fieldsOf(applied.token!.row!).id).toBe(known.principal.tokenId);
    expect(applied.outcome?.row.state).toBe("accepted");
    expect((await storedCommand(ok.external_id))?.state).toBe("accepted");

    expectStatus(await call("/logout/", { method: "POST", token: session.token }), 204);
    const late = command(task.url);
    const refused = await applySingle(env, known.principal, late, opts, known.proof);
    expect(refused.tokenMismatch).toBe(true);
    expect(fieldsOf(refused.token!.row!).revoked_at).toEqual(expect.any(Number));
    expect(refused.outcome).toBeUndefined();
    expect(await storedCommand(late.external_id)).toBeNull();
  });

  it("writes nothing when the token's standing changed since (a role deactivated)", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const task = await insertTask(acc.account.id, { state: "assigned", assigneeId: worker.userId });
    const known = await proofOf(worker.token);
    const roles = await call(`/account_roles/?role=worker`, { token: acc.admin.token });
    expectStatus(roles, 200);
    const role = roles.body.results.find((r: any) => r.user === worker.user);
    expectStatus(
      await call(`/account_roles/${role.id}/`, {
        method: "PATCH",
        token: acc.admin.token,
        body: { is_active: false },
      }),
      200,
    );
    const c = command(task.url);
    const r = await applySingle(env, known.principal, c, opts, known.proof);
    expect(r.tokenMismatch).toBe(true);
    expect(await storedCommand(c.external_id)).toBeNull();
  });

  it("through the API: a revoked token is 401 and writes nothing, for a new command, a replay or an unknown task", async () => {
    const acc = await newAccount();
    const session = await signIn(acc.admin.email, acc.admin.password);
    const task = await insertTask(acc.account.id);
    const first = command(task.url);
    // Twice with a token that holds: the second request carries the check in its write.
    expectStatus(await call("/task_commands/", { token: session.token, body: first }), 201);
    const second = command(task.url);
    expectStatus(await call("/task_commands/", { token: session.token, body: second }), 201);
    expectStatus(await call("/logout/", { method: "POST", token: session.token }), 204);

    const late = command(task.url);
    const r = await call("/task_commands/", { token: session.token, body: late });
    expectStatus(r, 401);
    expect(await storedCommand(late.external_id)).toBeNull();
    // A replay of a stored command, and a task that does not exist, are 401 too (not the stored
    // row, not a field error).
    expectStatus(await call("/task_commands/", { token: session.token, body: first }), 401);
    const missing = command(`https://api.test/tasks/${crypto.randomUUID()}/`);
    expectStatus(await call("/task_commands/", { token: session.token, body: missing }), 401);
  });

  it("through the API: a changed setting of the account is taken into account, the command applied once", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id);
    expectStatus(await call("/task_commands/", { token: acc.admin.token, body: command(task.url) }), 201);
    const patched = await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { failed_reasons: ["Nobody home"] },
    });
    expectStatus(patched, 200);
    const c = command(task.url);
    const r = await call("/task_commands/", { token: acc.admin.token, body: c });
    expectStatus(r, 201);
    expect(r.body.state).toBe("accepted");
    const rows = await stored
      .prepare("SELECT COUNT(*) AS n FROM task_commands WHERE external_id = ?")
      .bind(c.external_id)
      .first<{ n: number }>();
    expect(rows?.n).toBe(1);
    // The next one carries the new proof.
    expectStatus(await call("/task_commands/", { token: acc.admin.token, body: command(task.url) }), 201);
  });

  it("through the API: a hijack token dies with its admin's standing, before anything is written", async () => {
    const acc = await newAccount();
    const admin2 = await addUser(acc, "admin");
    const worker = await addUser(acc, "worker");
    const task = await insertTask(acc.account.id, { state: "assigned", assigneeId: worker.userId });
    const hijack = await call(`/users/${worker.userId}/hijack/`, { method: "POST", token: admin2.token });
    expectStatus(hijack, 200);
    expectStatus(await call("/task_commands/", { token: hijack.body.token, body: command(task.url) }), 201);
    const roles = await call(`/account_roles/?role=admin`, { token: acc.admin.token });
    const role = roles.body.results.find((r: any) => r.user === admin2.user);
    expectStatus(
      await call(`/account_roles/${role.id}/`, {
        method: "PATCH",
        token: acc.admin.token,
        body: { role: "manager" },
      }),
      200,
    );
    const c = command(task.url);
    expectStatus(await call("/task_commands/", { token: hijack.body.token, body: c }), 401);
    expect(await storedCommand(c.external_id)).toBeNull();
  });

  it("a batch that wrote nothing because another writer moved the task reads the row, and the command still applies once", async () => {
    const acc = await newAccount();
    const session = await signIn(acc.admin.email, acc.admin.password);
    const task = await insertTask(acc.account.id);
    const known = await proofOf(session.token);
    // The task's object remembers the task as this command leaves it...
    const first = command(task.url);
    expect((await applySingle(env, known.principal, first, opts, known.proof)).outcome?.row.state).toBe(
      "accepted",
    );
    // ...and another writer moves its version behind the object's back, so the next batch's
    // guarded update (the one carrying the proof) writes nothing although the token holds.
    await stored.prepare("UPDATE tasks SET version = version + 1 WHERE id = ?").bind(task.id).run();
    const second = command(task.url);
    const r = await applySingle(env, known.principal, second, opts, known.proof);
    expect(r.tokenMismatch).toBeUndefined();
    expect(fieldsOf(r.token!.row!).id).toBe(known.principal.tokenId);
    expect(r.outcome?.row.state).toBe("accepted");
    const rows = await stored
      .prepare("SELECT COUNT(*) AS n FROM task_commands WHERE external_id = ?")
      .bind(second.external_id)
      .first<{ n: number }>();
    expect(rows?.n).toBe(1);
  });

  it("the guard in SQL and its test in JavaScript agree: unchanged and unexpired, or nothing", async () => {
    const acc = await newAccount();
    const session = await signIn(acc.admin.email, acc.admin.password);
    const known = await proofOf(session.token);
    const verdicts = async (now: number) => {
      const guard = proofGuard(known.proof, now);
      const [read, check] = await stored.batch([
        proofStatement(stored, known.proof),
        stored.prepare(`SELECT ${guard.sql} AS ok`).bind(...guard.params),
      ]);
      const row = (read.results[0] as TokenRow | undefined) ?? null;
      return { sql: Boolean((check.results[0] as { ok: number }).ok), js: proofHolds(row, known.proof, now) };
    };
    const row = fieldsOf((await proofStatement(stored, known.proof).first<TokenRow>())!);
    expect(await verdicts(Date.now())).toEqual({ sql: true, js: true });
    // The session's own expiry, with the row unchanged: both refuse from that instant on.
    expect(await verdicts(row.expires_at!)).toEqual({ sql: false, js: false });
    expect(await verdicts(row.expires_at! - 1)).toEqual({ sql: true, js: true });
    // Any change to the row (here its revocation): both refuse.
    await stored.prepare("UPDATE auth_tokens SET revoked_at = ? WHERE id = ?").bind(Date.now(), row.id).run();
    expect(await verdicts(Date.now())).toEqual({ sql: false, js: false });
  });
});
