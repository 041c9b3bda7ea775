import { describe, expect, it } from "vitest";
import { clientFrame } from "../../src/domain/live";
import { pngBytes, uploadFile } from "../files/helpers";
import { inspectionForm } from "../forms/helpers";
import { addUser, call, expectStatus, newAccount, type TestAccount } from "../helpers";
import { sampleTask } from "../tasks/helpers";
import { type Message, open, type Stream, ticket } from "./client";

/**
 * Security round three (issue 45): the live stream (contract §25) shows each viewer what the API
 * would answer that viewer, ends when the right to it ends, and has limits.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const command = (token: string, task: string, action: string, extra: Record<string, unknown> = {}) =>
  call("/task_commands/", {
    token,
    body: { task, external_id: `l-${crypto.randomUUID()}`, time: new Date().toISOString(), action, ...extra },
  });

/** Waits for the stream's next messages (after `seen`) until `types` have all come; returns them. */
async function next(s: Stream, seen: number, types: string[]): Promise<Message[]> {
  await s.until(() => types.every((t) => s.messages.slice(seen).some((m) => m.type === t)), types.join(", "));
  return s.messages.slice(seen);
}

async function roleOf(acc: TestAccount, user: string) {
  const roles = await call("/account_roles/?page_size=500", { token: acc.admin.token });
  expectStatus(roles, 200);
  return roles.body.results.find((r: any) => r.user === user);
}

const withoutTask = ({ task: _t, ...rest }: Record<string, unknown>) => rest;

async function attach(acc: TestAccount, kind: "documents" | "signatures", task: any, extra = {}) {
  const fu = await uploadFile(acc.admin.token, `${kind}.png`, "image/png", await pngBytes(20, 10));
  const r = await call(`/${kind}/`, {
    token: acc.admin.token,
    body: { account: acc.account.url, task: task.url, file_upload: fu.url, ...extra },
  });
  expectStatus(r, 201);
  return r.body;
}

describe("a worker's stream carries what that worker's GET answers (issue 45, items 1-2)", () => {
  it("every event type: the same object as the worker's GET, or nothing where that GET is 404", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const form = await inspectionForm(acc); // its field `internal` is hidden from workers
    const s = await open(await ticket(worker.token));
    const admin = await open(await ticket(acc.admin.token));
    const get = async (path: string) => {
      const r = await call(path, { token: worker.token });
      return r.status === 404 ? null : r.body;
    };

    // task.created: the worker's rendering, without the hidden field's default.
    const created = await call("/tasks/", {
      token: acc.admin.token,
      body: sampleTask(acc, {
        assignee: worker.user,
        form_default_values: { [form.id]: { count: 3, internal: "customer owes 40 EUR" } },
      }),
    });
    expectStatus(created, 201);
    const task = created.body;
    let got = await next(s, 0, ["task.created"]);
    expect(got.find((m) => m.type === "task.created")!.data).toEqual(await get(`/tasks/${task.id}/`));
    expect(got.find((m) => m.type === "task.created")!.data.form_default_values).toEqual({
      [form.id]: { count: 3 },
    });

    // task.updated (PATCH by the admin).
    let seen = s.messages.length;
    expectStatus(
      await call(`/tasks/${task.id}/`, {
        method: "PATCH",
        token: acc.admin.token,
        body: { description: "Ring twice" },
      }),
      200,
    );
    got = await next(s, seen, ["task.updated"]);
    expect(got.find((m) => m.type === "task.updated")!.data).toEqual(await get(`/tasks/${task.id}/`));

    // Documents: the visible one as the worker's GET has it; the hidden one not at all (GET 404).
    seen = s.messages.length;
    const hiddenDoc = await attach(acc, "documents", task, { visible_to_worker: false });
    const shownDoc = await attach(acc, "documents", task, { visible_to_worker: true });
    const signature = await attach(acc, "signatures", task);
    expect(await get(`/documents/${hiddenDoc.id}/`)).toBeNull();
    got = await next(s, seen, ["document.created", "signature.created"]);
    const docs = got.filter((m) => m.type === "document.created");
    expect(docs.map((m) => m.data.id)).toEqual([shownDoc.id]);
    expect(withoutTask(docs[0].data)).toEqual(withoutTask(await get(`/documents/${shownDoc.id}/`)));
    expect(docs[0].data.task.form_default_values).toEqual({ [form.id]: { count: 3 } });
    const sig = got.find((m) => m.type === "signature.created")!;
    expect(withoutTask(sig.data)).toEqual(withoutTask(await get(`/signatures/${signature.id}/`)));

    // The worker's own command: as its GET; the task inline as the worker reads it.
    seen = s.messages.length;
    const accept = await command(worker.token, task.url, "accept");
    expectStatus(accept, 201);
    got = await next(s, seen, ["task_command.accepted", "task.state_changed"]);
    const own = got.find((m) => m.type === "task_command.accepted")!;
    expect(withoutTask(own.data)).toEqual(withoutTask(await get(`/task_commands/${accept.body.id}/`)));
    expect(own.data.task).toEqual(await get(`/tasks/${task.id}/`));
    expect(got.find((m) => m.type === "task.state_changed")!.data).toEqual(await get(`/tasks/${task.id}/`));

    // A dispatcher's command on the worker's task: its GET is 404 to the worker, so nothing;
    // the change itself reaches the worker as the task's event.
    seen = s.messages.length;
    const adminCommand = await command(acc.admin.token, task.url, "transit");
    expectStatus(adminCommand, 201);
    expect(await get(`/task_commands/${adminCommand.body.id}/`)).toBeNull();
    got = await next(s, seen, ["task.state_changed", "task.updated"]);
    expect(got.some((m) => m.data.id === adminCommand.body.id)).toBe(false);
    // The command itself reaches the worker as its task's change (contract §30: a phone's day
    // follows the dispatcher), the task as the worker reads it.
    expect(got.find((m) => m.type === "task.updated")!.data).toEqual(await get(`/tasks/${task.id}/`));
    expect(got.some((m) => m.type.startsWith("task_command."))).toBe(false);

    // form_response.completed: without the hidden field's value nor its snapshot entry.
    const response = await call("/form_responses/", {
      token: acc.admin.token,
      body: { form: form.url, task: task.url, data: { condition: "ok", internal: "do not tell" } },
    });
    expectStatus(response, 201);
    seen = s.messages.length;
    expectStatus(
      await call(`/form_responses/${response.body.id}/complete/`, { method: "POST", token: acc.admin.token }),
      200,
    );
    got = await next(s, seen, ["form_response.completed"]);
    const completed = got.find((m) => m.type === "form_response.completed")!;
    expect(withoutTask(completed.data)).toEqual(
      withoutTask(await get(`/form_responses/${response.body.id}/`)),
    );
    expect(completed.data.schema_snapshot.fields.map((f: any) => f.key)).not.toContain("internal");

    // Deletions: the visible document's as it was; the hidden one's not at all.
    const shownBefore = await get(`/documents/${shownDoc.id}/`);
    seen = s.messages.length;
    for (const doc of [hiddenDoc, shownDoc])
      expectStatus(await call(`/documents/${doc.id}/`, { method: "DELETE", token: acc.admin.token }), 204);
    got = await next(s, seen, ["document.deleted"]);

    // Orders and other workers' tasks: nothing.
    const other = await call("/tasks/", { token: acc.admin.token, body: sampleTask(acc) });
    expectStatus(other, 201);
    const order = await call("/orders/", {
      token: acc.admin.token,
      body: { account: acc.account.url, reference: "R-1", tasks_data: [] },
    });
    expectStatus(order, 201);
    await admin.until(() => admin.messages.some((m) => m.type === "order.created"), "order.created");
    await sleep(300);
    const deleted = s.messages.filter((m) => m.type === "document.deleted");
    expect(deleted.map((m) => m.data.id)).toEqual([shownDoc.id]);
    expect(withoutTask(deleted[0].data)).toEqual(withoutTask(shownBefore));

    const everything = JSON.stringify(s.messages);
    for (const secret of ["owes 40", "do not tell", hiddenDoc.id, other.body.id, order.body.id])
      expect(everything).not.toContain(secret);
    expect(s.messages.map((m) => m.type)).not.toContain("order.created");
    // The admin saw all of it, as stored.
    expect(JSON.stringify(admin.messages)).toContain(hiddenDoc.id);
    expect(JSON.stringify(admin.messages)).toContain("owes 40");
  });
});

describe("a stream ends when the right to it ends (issue 45, items 3-4)", () => {
  it("a hijack stream closes with 4001 when its admin signs out, is demoted or is removed", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    for (const end of ["sign-out", "demotion", "removal"] as const) {
      const second = await addUser(acc, "admin", `admin ${end}`);
      const hijack = await call(`/users/${worker.userId}/hijack/`, { method: "POST", token: second.token });
      expectStatus(hijack, 200);
      const s = await open(await ticket(hijack.body.token));
      expect(s.status).toBe(101);
      const own = await open(await ticket(worker.token));
      const role = await roleOf(acc, second.user);
      if (end === "sign-out")
        expectStatus(await call("/logout/", { method: "POST", token: second.token }), 204);
      if (end === "demotion")
        expectStatus(
          await call(`/account_roles/${role.id}/`, {
            method: "PATCH",
            token: acc.admin.token,
            body: { role: "manager" },
          }),
          200,
        );
      if (end === "removal")
        expectStatus(
          await call(`/account_roles/${role.id}/`, { method: "DELETE", token: acc.admin.token }),
          204,
        );
      expect((await call("/users/me/", { token: hijack.body.token })).status).toBe(401);
      await s.until(() => s.closed() !== null, `close after ${end}`, 1_000);
      expect(s.closed()!.code).toBe(4001);
      // The worker's own stream has nothing to do with it.
      await sleep(50);
      expect(own.closed()).toBeNull();
      own.ws.close(1000);
    }
  });

  it("a ticket opens the view of the role its user holds when it is spent, not when it was made", async () => {
    const acc = await newAccount();
    const user = await addUser(acc, "manager");
    const t = await ticket(user.token);
    const role = await roleOf(acc, user.user);
    expectStatus(
      await call(`/account_roles/${role.id}/`, {
        method: "PATCH",
        token: acc.admin.token,
        body: { role: "worker" },
      }),
      200,
    );
    const s = await open(t);
    expect(s.status).toBe(101);
    const admin = await open(await ticket(acc.admin.token));
    const other = await call("/tasks/", { token: acc.admin.token, body: sampleTask(acc) });
    expectStatus(other, 201);
    const mine = await call("/tasks/", {
      token: acc.admin.token,
      body: sampleTask(acc, { assignee: user.user }),
    });
    expectStatus(mine, 201);
    await admin.until(() => admin.messages.filter((m) => m.type === "task.created").length === 2, "both");
    await s.until(() => s.messages.some((m) => m.type === "task.created"), "the worker's task");
    await sleep(300);
    expect(s.messages.filter((m) => m.type === "task.created").map((m) => m.data.id)).toEqual([mine.body.id]);
  });
});

describe("limits on streams (issue 45, item 6)", () => {
  it("past the per-user cap the upgrade is 429 with Retry-After; closing one frees a place", async () => {
    const acc = await newAccount();
    const streams: Stream[] = [];
    for (let i = 0; i < 50; i++) {
      const s = await open(await ticket(acc.admin.token));
      expect(s.status).toBe(101);
      streams.push(s);
    }
    const over = await open(await ticket(acc.admin.token));
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ detail: expect.stringMatching(/at most 50/), code: "throttled" });
    // Another user of the account is not held back by this one's streams.
    const manager = await addUser(acc, "manager");
    expect((await open(await ticket(manager.token))).status).toBe(101);
    streams[0].ws.close(1000);
    await sleep(100);
    expect((await open(await ticket(acc.admin.token))).status).toBe(101);
    for (const s of streams) s.ws.close(1000);
  });

  it("frames a client has no reason to send close the socket with RFC 6455's codes", async () => {
    const acc = await newAccount();
    const binary = await open(await ticket(acc.admin.token));
    binary.ws.send(new Uint8Array([1, 2, 3]));
    await binary.until(() => binary.closed() !== null, "close on a binary frame");
    expect(binary.closed()!.code).toBe(1003);
    const big = await open(await ticket(acc.admin.token));
    big.ws.send("x".repeat(64 * 1024));
    await big.until(() => big.closed() !== null, "close on a big frame");
    expect(big.closed()!.code).toBe(1009);
    const bad = await open(await ticket(acc.admin.token));
    bad.ws.send("ping\uFFFD");
    await bad.until(() => bad.closed() !== null, "close on text that was not UTF-8");
    expect(bad.closed()!.code).toBe(1007);
    const fine = await open(await ticket(acc.admin.token));
    const pong = new Promise<string>((resolve) =>
      fine.ws.addEventListener("message", (m) => resolve(m.data as string)),
    );
    fine.ws.send("ping");
    expect(await pong).toBe("pong");
    expect(fine.closed()).toBeNull();
    expect(clientFrame(new TextDecoder().decode(new Uint8Array([0x70, 0xc3, 0x28])))).toEqual({
      code: 1007,
      reason: expect.any(String),
    });
  });
});
