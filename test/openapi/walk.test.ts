/**
 * The OpenAPI walk: every operation of /openapi.json, on a new deployment and a fresh account,
 * in a reader's order, as a third-party client fed only the document would call them.
 *
 * - Every answer is checked against the document (contract.ts): a documented status, a
 *   documented media type, a body valid against its schema, every required header.
 * - Every request example of the document is sent, in document order, with the ids of the
 *   objects the earlier examples made, and must get its documented success status.
 * - Every operation is called at least once with a success status.
 * - The answers are the document's response examples (src/http/openapi-examples.generated.json):
 *   the file must equal what this walk records; `npm run openapi:examples` writes it again.
 */
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { EXAMPLE_IMPORT_CSV } from "../../src/http/openapi-examples";
import { twilioSignature } from "../../src/services/messaging/sms";
import { pngBytes } from "../files/helpers";
import { BASE, call } from "../helpers";
import { operationsOf } from "./contract";
import { type Sent, Walk } from "./walk";

let w: Walk;
const tokens: Record<"admin" | "worker" | "integration" | "operator", string> = {} as never;
const ids: Record<string, string> = {};
const PASSWORD = "correct horse battery staple";
const WORKER_PASSWORD = "a long passphrase";
const BOOTSTRAP_TOKEN = "walk-bootstrap-token-0123456789abcdef0123";
let restoreFetch: () => void;

const idOf = (url: string) => url.split("/").filter(Boolean).at(-1)!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls an operation (answers not recorded) until `done` holds. */
async function until(
  send: () => Promise<Sent>,
  done: (r: Sent) => unknown,
  what: string,
  ms = 20_000,
): Promise<Sent> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await send();
    if (done(r)) return r;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${r.text.slice(0, 500)}`);
    await sleep(100);
  }
}

const admin = () => tokens.admin;

async function signIn(email: string, password: string) {
  const r = await w.send({
    op: "authenticate",
    body: { username: email, password },
    expect: 200,
    record: false,
  });
  return r.body.token as string;
}

/** The newest mailed token of `kind` to `to` (an admin reads the outbox). */
async function mailedToken(kind: string, to: string) {
  const r = await w.send({
    op: "listOutbox",
    token: admin(),
    query: "page_size=500",
    expect: 200,
    record: false,
  });
  const mail = r.body.results.filter((m: any) => m.to === to && m.kind === kind).at(-1);
  if (!mail) throw new Error(`no ${kind} e-mail to ${to}`);
  return /token: (\S+)/.exec(mail.text)![1];
}

/** Uploads `bytes` through the signed form of a file upload (S3's POST Object). */
async function upload(fileUpload: any, bytes: Uint8Array, type: string) {
  const form = new FormData();
  for (const [k, v] of Object.entries<string>(fileUpload.s3_signature.fields)) form.append(k, v);
  form.append("file", new Blob([bytes], { type }), fileUpload.file_name);
  await w.send({ op: "uploadFile", url: fileUpload.s3_signature.url, raw: form, expect: 204 });
}

const email = (local: string) => w.rec.toReal(`${local}@acme.example.com`);

beforeAll(async () => {
  const r = await call("/openapi.json");
  expect(r.status).toBe(200);
  w = new Walk(r.body);
  // Webhook deliveries go to hooks.example.com: answered here (the Worker shares this global scope).
  const real = globalThis.fetch;
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url.startsWith("https://hooks.example.com/")) return new Response(null, { status: 204 });
    return real(input as RequestInfo, init);
  });
  restoreFetch = () => spy.mockRestore();
});

afterAll(() => restoreFetch?.());

/** A queue whose messages go nowhere: a job created with it stays queued (to be cancelled). */
const lostQueue = { send: async () => undefined, sendBatch: async () => undefined } as unknown as Queue;

describe("the OpenAPI walk", () => {
  it("Service", async () => {
    await w.send({ op: "retrieveApiRoot", expect: 200 });
    await w.send({ op: "retrieveHealth", expect: 200 });
    await w.send({ op: "retrieveOpenApiDocument", expect: 200, record: false });
    await w.send({ op: "retrieveDocsPage", expect: 200 });
    // Not recorded: the page names its assets by their build's hashes.
    await w.send({ op: "retrieveConsolePage", expect: 200, record: false });
    await w.send({ op: "retrieveFieldAppPage", expect: 200, record: false });
  });

  it("Accounts: a new deployment's first admin, a sign-up, the account", async () => {
    await w.send({
      op: "bootstrapFirstAdmin",
      example: "",
      env: { BOOTSTRAP_TOKEN },
      headers: { "X-Bootstrap-Token": BOOTSTRAP_TOKEN },
      expect: 201,
      name: "bootstrapAccount",
    });
    const account = await w.send({ op: "createAccount", example: "", expect: 201, name: "account" });
    tokens.admin = await signIn(email("admin"), PASSWORD);
    await w.send({ op: "retrieveCurrentUser", token: admin(), expect: 200, name: "admin" });
    await w.send({ op: "listAccounts", token: admin(), expect: 200 });
    // The account's stream object before any task or command: its counters then are the same in
    // every run (a lateness check follows commands by seconds, so how many ran by a later point
    // depends on the machine's speed).
    await w.send({ op: "streamStats", token: admin(), expect: 200 });
    await w.send({ op: "retrieveAccount", token: admin(), path: { id: account.body.id }, expect: 200 });
    await w.send({
      op: "partialUpdateAccount",
      token: admin(),
      path: { id: account.body.id },
      example: "",
      expect: 200,
    });
  });

  it("Users: a worker who activates, an integration, e-mail verification, hijack", async () => {
    const worker = await w.send({
      op: "createUser",
      token: admin(),
      example: "A field worker, who gets an activation e-mail",
      expect: 201,
      name: "worker",
    });
    const integration = await w.send({
      op: "createUser",
      token: admin(),
      example: "An integration, with a password",
      expect: 201,
      name: "integration",
    });
    await w.send({ op: "listUsers", token: admin(), expect: 200 });
    await w.send({ op: "retrieveUser", token: admin(), path: { id: integration.body.id }, expect: 200 });
    await w.send({
      op: "partialUpdateUser",
      token: admin(),
      path: { id: integration.body.id },
      example: "",
      expect: 200,
    });
    await w.send({
      op: "verifyEmailUser",
      token: admin(),
      path: { id: w.rec.realId("admin") },
      expect: 204,
    });
    w.rec.token("activation", await mailedToken("activation", email("driver")));
    w.rec.token("verifyEmail", await mailedToken("email_verification", email("admin")));
    await w.send({ op: "activateUser", example: "", expect: 204 });
    await w.send({ op: "confirmVerifyEmailUser", example: "", expect: 204 });
    tokens.worker = await signIn(email("driver"), WORKER_PASSWORD);
    tokens.integration = await signIn(email("erp"), "a long integration password");
    await w.send({ op: "hijackUser", token: admin(), path: { id: worker.body.id }, expect: 200 });
  });

  it("Account roles: an invitation, the worker's addresses, an invitation accepted", async () => {
    await w.send({ op: "createAccountRole", token: admin(), example: "", expect: 201 });
    const roles = await w.send({ op: "listAccountRoles", token: admin(), expect: 200 });
    const roleOf = (user: string) => roles.body.results.find((r: any) => r.user === user || r.email === user);
    const workerRole = roleOf(`${BASE}/users/${w.rec.realId("worker")}/`);
    ids.managerRole =
      roleOf(email("manager"))?.id ?? roles.body.results.find((r: any) => r.state === "pending")?.id;
    expect(workerRole, JSON.stringify(roles.body)).toBeTruthy();
    expect(ids.managerRole).toBeTruthy();
    await w.send({ op: "retrieveAccountRole", token: admin(), path: { id: workerRole.id }, expect: 200 });
    await w.send({
      op: "partialUpdateAccountRole",
      token: admin(),
      path: { id: workerRole.id },
      example: "The worker's vehicle and depots (admins)",
      expect: 200,
    });
    await w.send({
      op: "partialUpdateAccountRole",
      token: tokens.worker,
      path: { id: workerRole.id },
      example: "The worker goes on duty (its own role)",
      expect: 200,
    });
    await w.send({
      op: "resendActivationTokenAccountRole",
      token: admin(),
      path: { id: ids.managerRole },
      expect: 204,
    });
    // The first deployment's account invites the worker, who accepts.
    tokens.operator = await signIn(email("ops"), PASSWORD);
    const invitation = await w.send({
      op: "createAccountRole",
      token: tokens.operator,
      body: { email: email("driver"), role: "worker" },
      expect: 201,
      record: false,
    });
    await w.send({
      op: "acceptAccountRole",
      token: tokens.worker,
      path: { id: invitation.body.id },
      expect: 200,
    });
  });

  it("Authentication: sign in, sessions, an integration's token", async () => {
    const signedIn = await w.send({ op: "authenticate", example: "", expect: 200 });
    tokens.admin = signedIn.body.token;
    await w.send({ op: "listSessionTokens", token: admin(), expect: 200 });
    const refreshed = await w.send({ op: "refreshSessionToken", token: admin(), expect: 200 });
    tokens.admin = refreshed.body.token;
    const session = await w.send({
      op: "createSessionToken",
      token: tokens.integration,
      example: "",
      expect: 201,
    });
    ids.session = session.body.id;
    await w.send({ op: "authorizeSessionToken", token: admin(), example: "", expect: 200 });
  });

  it("Webhooks", async () => {
    const hook = await w.send({
      op: "createWebhook",
      token: admin(),
      example: "",
      expect: 201,
      name: "webhook",
    });
    await w.send({ op: "listWebhooks", token: admin(), expect: 200 });
    await w.send({ op: "retrieveWebhook", token: admin(), path: { id: hook.body.id }, expect: 200 });
    await w.send({
      op: "updateWebhook",
      token: admin(),
      path: { id: hook.body.id },
      example: "",
      expect: 200,
    });
    await w.send({
      op: "partialUpdateWebhook",
      token: admin(),
      path: { id: hook.body.id },
      example: "",
      expect: 200,
    });
  });

  it("Metafields, clients, contact addresses", async () => {
    const mf = await w.send({
      op: "createMetafield",
      token: admin(),
      example: "",
      expect: 201,
      name: "metafield",
    });
    await w.send({ op: "listMetafields", token: admin(), expect: 200 });
    await w.send({ op: "retrieveMetafield", token: admin(), path: { id: mf.body.id }, expect: 200 });
    await w.send({
      op: "updateMetafield",
      token: admin(),
      path: { id: mf.body.id },
      example: "",
      expect: 200,
    });
    await w.send({
      op: "partialUpdateMetafield",
      token: admin(),
      path: { id: mf.body.id },
      example: "",
      expect: 200,
    });

    const client = await w.send({
      op: "createClient",
      token: admin(),
      example: "",
      expect: 201,
      name: "client",
    });
    await w.send({
      op: "createClient",
      token: admin(),
      body: w.example("createClient", ""),
      expect: 200,
      record: "A known external_id: that client, updated",
    });
    await w.send({ op: "listClients", token: admin(), expect: 200 });
    await w.send({ op: "retrieveClient", token: admin(), path: { id: client.body.id }, expect: 200 });
    await w.send({
      op: "updateClient",
      token: admin(),
      path: { id: client.body.id },
      example: "",
      expect: 200,
    });
    await w.send({
      op: "partialUpdateClient",
      token: admin(),
      path: { id: client.body.id },
      example: "",
      expect: 200,
    });

    const ca = await w.send({
      op: "createContactAddress",
      token: admin(),
      example: "",
      expect: 201,
      name: "contactAddress",
    });
    await w.send({ op: "listContactAddresses", token: admin(), expect: 200 });
    await w.send({ op: "retrieveContactAddress", token: admin(), path: { id: ca.body.id }, expect: 200 });
    await w.send({
      op: "updateContactAddress",
      token: admin(),
      path: { id: ca.body.id },
      example: "",
      expect: 200,
    });
    await w.send({
      op: "partialUpdateContactAddress",
      token: admin(),
      path: { id: ca.body.id },
      example: "",
      expect: 200,
    });
  });

  it("Tasks and orders", async () => {
    const task = await w.send({
      op: "createTask",
      token: admin(),
      example: "A task for the worker",
      expect: 201,
      name: "task",
    });
    const weekly = await w.send({
      op: "createTask",
      token: admin(),
      example: "A weekly task: the first occurrence now, the others by the cron",
      expect: 201,
    });
    ids.weekly = weekly.body.id;
    await w.send({
      op: "listTasks",
      token: admin(),
      query: "state=assigned&metafields%5Bdoor_code%5D=4711",
      expect: 200,
    });
    await w.send({ op: "retrieveTask", token: admin(), path: { id: task.body.id }, expect: 200 });
    await w.send({ op: "updateTask", token: admin(), path: { id: task.body.id }, example: "", expect: 200 });
    await w.send({
      op: "partialUpdateTask",
      token: admin(),
      path: { id: task.body.id },
      example: "",
      expect: 200,
    });
    // Auto-assign (contract §29): the task is the worker's already, and nobody is on duty yet.
    await w.send({
      op: "createTaskAutoAssign",
      token: admin(),
      example: "A day's unassigned tasks, by window start",
      expect: 200,
    });
    const placed = await w.send({
      op: "createTaskAutoAssign",
      token: admin(),
      example: "Some tasks, in this order (one already assigned is answered as it stands)",
      expect: 200,
    });
    expect(placed.body).toHaveLength(1);

    const order = await w.send({
      op: "createOrder",
      token: admin(),
      example: "One order, created or updated by its external_id",
      expect: 201,
      name: (body) => [
        ["order", body.id],
        ["pickUp", idOf(body.tasks[0])],
        ["dropOff", idOf(body.tasks[1])],
      ],
    });
    const batch = await w.send({
      op: "createOrder",
      token: admin(),
      example: "A batch of orders, stored all or nothing",
      expect: 201,
    });
    expect(batch.body).toHaveLength(2);
    ids.batchOrder = batch.body[1].id;
    ids.batchTask = idOf(batch.body[0].tasks[0]);
    await w.send({
      op: "createOrder",
      token: admin(),
      body: w.example("createOrder", "One order, created or updated by its external_id"),
      expect: 200,
      record: "The same order again: updated, no task duplicated",
    });
    await w.send({ op: "listOrders", token: admin(), expect: 200 });
    await w.send({ op: "retrieveOrder", token: admin(), path: { id: order.body.id }, expect: 200 });
    await w.send({
      op: "partialUpdateOrder",
      token: admin(),
      path: { id: order.body.id },
      example: "",
      expect: 200,
    });
  });

  it("Task commands, events, webhook deliveries", async () => {
    const one = await w.send({
      op: "createTaskCommand",
      token: tokens.worker,
      example: "One command (the assignee accepts)",
      expect: 201,
    });
    expect(one.body.state).toBe("accepted");
    const batch = await w.send({
      op: "createTaskCommand",
      token: tokens.worker,
      example: "A batch from a phone that was offline",
      expect: 201,
    });
    expect(batch.body.map((c: any) => c.state)).toEqual(["accepted", "accepted"]);
    await w.send({
      op: "createTaskCommand",
      token: tokens.worker,
      body: w.example("createTaskCommand", "A batch from a phone that was offline"),
      expect: 200,
      record: "The same batch again: every command a replay",
    });
    const pending = await w.send({
      op: "createTaskCommand",
      token: tokens.worker,
      headers: { Prefer: "respond-async" },
      body: {
        task: `${BASE}/tasks/${w.rec.realId("dropOff")}/`,
        external_id: "phone-7f3a-000126",
        time: "2030-06-03T10:02:00.000Z",
        action: "accept",
      },
      expect: 202,
      record: "With `Prefer: respond-async`: stored, applied from a queue",
    });
    await w.send({ op: "listTaskCommands", token: admin(), query: "action=complete", expect: 200 });
    await until(
      () =>
        w.send({
          op: "retrieveTaskCommand",
          token: admin(),
          path: { id: pending.body.id },
          expect: 200,
          record: false,
        }),
      (r) => r.body.state !== "pending",
      "the asynchronous command",
    );
    await w.send({ op: "retrieveTaskCommand", token: admin(), path: { id: one.body.id }, expect: 200 });

    const events = await until(
      () =>
        w.send({
          op: "listEvents",
          token: admin(),
          query: "type=task.state_changed",
          expect: 200,
          record: false,
        }),
      (r) => r.body.results.length >= 3,
      "settled events",
    );
    await w.send({ op: "listEvents", token: admin(), query: "type=task.state_changed", expect: 200 });
    const ticket = await w.send({ op: "createStreamTicket", token: admin(), expect: 201 });
    await w.send({
      op: "streamEvents",
      query: `ticket=${encodeURIComponent(ticket.body.ticket)}&types=task.created`,
      headers: { Upgrade: "websocket" },
      expect: 101,
      record: false,
    });
    await w.send({
      op: "retrieveEvent",
      token: admin(),
      path: { id: events.body.results[0].id },
      expect: 200,
    });

    const hook = w.rec.realId("webhook");
    const deliveries = await until(
      () =>
        w.send({
          op: "listWebhookDeliveries",
          token: admin(),
          path: { id: hook },
          query: "state=succeeded",
          expect: 200,
          record: false,
        }),
      (r) => r.body.results.length >= 3,
      "webhook deliveries",
    );
    await w.send({
      op: "listWebhookDeliveries",
      token: admin(),
      path: { id: hook },
      query: "state=succeeded",
      expect: 200,
    });
    const first = deliveries.body.results.at(-1);
    await w.send({
      op: "retrieveWebhookDelivery",
      token: admin(),
      path: { id: hook, delivery_id: first.id },
      expect: 200,
    });
    await w.send({
      op: "redeliverWebhookDelivery",
      token: admin(),
      path: { id: hook, delivery_id: first.id },
      expect: 202,
    });
  });

  it("Positions of a worker on duty (contract §28)", async () => {
    // The document's day is 2030-06-03; a position's time is checked against the clock, so the
    // examples are sent as of now, a minute apart as written.
    const asOfNow = (example: unknown) => {
      const end = Date.parse("2030-06-03T09:31:00.000Z");
      return JSON.parse(
        JSON.stringify(example).replace(/"(2030-06-03T[0-9:.]+Z)"/g, (_, t: string) =>
          JSON.stringify(new Date(Date.now() - (end - Date.parse(t))).toISOString()),
        ),
      );
    };
    const one = await w.send({
      op: "createPositions",
      token: tokens.worker,
      example: "One position",
      now: asOfNow,
      expect: 202,
    });
    expect(one.body).toEqual({ stored: 1, dropped: 0 });
    await w.send({
      op: "createPositions",
      token: tokens.worker,
      example: "A batch from a phone back online (any order)",
      now: asOfNow,
      expect: 202,
    });
    const trail = await w.send({
      op: "listPositions",
      token: admin(),
      query: `user=${encodeURIComponent(`${BASE}/users/${w.rec.realId("worker")}/`)}`,
      expect: 200,
    });
    expect(trail.body.results).toHaveLength(3);
  });

  it("Files: uploads, storage, documents, signatures, proof of delivery", async () => {
    const bytes = {
      "A delivery note (text)": new TextEncoder().encode(
        "Delivered 3 June 2030: two parcels, signed for by Aino Virtanen.\n",
      ),
      "A photo (PNG)": await pngBytes(64, 48),
      "A signature (PNG)": await pngBytes(120, 40),
      "A CSV file to import": new TextEncoder().encode(EXAMPLE_IMPORT_CSV),
    };
    const names = {
      "A delivery note (text)": "uploadNote",
      "A photo (PNG)": "uploadPhoto",
      "A signature (PNG)": "uploadSignature",
      "A CSV file to import": "uploadCsv",
    } as const;
    const uploads: Record<string, any> = {};
    for (const [summary, content] of Object.entries(bytes)) {
      const fu = await w.send({
        op: "createFileUpload",
        token: admin(),
        example: summary,
        expect: 201,
        name: names[summary as keyof typeof names],
      });
      await upload(fu.body, content, fu.body.file_type);
      uploads[summary] = fu.body;
    }
    await w.send({ op: "listFileUploads", token: admin(), expect: 200 });
    const note = uploads["A delivery note (text)"];
    await w.send({ op: "retrieveFileUpload", token: admin(), path: { id: note.id }, expect: 200 });
    // A stored file: whole, one range, not modified, a failed precondition, a range past the end.
    const file = await w.send({ op: "downloadFileUpload", url: note.file, expect: 200 });
    const etag = file.headers.get("ETag")!;
    await w.send({
      op: "downloadFileUpload",
      url: note.file,
      headers: { Range: "bytes=0-8" },
      expect: 206,
      record: false,
    });
    await w.send({
      op: "downloadFileUpload",
      url: note.file,
      headers: { "If-None-Match": etag },
      expect: 304,
    });
    await w.send({
      op: "downloadFileUpload",
      url: note.file,
      headers: { "If-Match": '"other"' },
      expect: 412,
    });
    await w.send({
      op: "downloadFileUpload",
      url: note.file,
      headers: { Range: "bytes=9999-" },
      expect: 416,
    });

    const noteDoc = await w.send({
      op: "createDocument",
      token: admin(),
      example: "A delivery note",
      expect: 201,
      name: "note",
    });
    const photo = await w.send({
      op: "createDocument",
      token: admin(),
      example: "A photo of the parcel",
      expect: 201,
      name: "photo",
    });
    await w.send({ op: "downloadDocument", url: noteDoc.body.file, expect: 200 });
    const withThumbnail = await until(
      () =>
        w.send({
          op: "retrieveDocument",
          token: admin(),
          path: { id: photo.body.id },
          expect: 200,
          record: false,
        }),
      (r) => r.body.thumbnail,
      "the photo's thumbnail",
    );
    await w.send({ op: "downloadDocumentThumbnail", url: withThumbnail.body.thumbnail, expect: 200 });
    await w.send({ op: "listDocuments", token: admin(), expect: 200 });
    await w.send({ op: "retrieveDocument", token: admin(), path: { id: photo.body.id }, expect: 200 });
    await w.send({
      op: "partialUpdateDocument",
      token: admin(),
      path: { id: photo.body.id },
      example: "",
      expect: 200,
    });
    await w.send({ op: "batchDeleteDocuments", token: admin(), example: "", expect: 204 });

    const signature = await w.send({
      op: "createSignature",
      token: admin(),
      example: "",
      expect: 201,
      name: "signature",
    });
    const signed = await until(
      () =>
        w.send({
          op: "retrieveSignature",
          token: admin(),
          path: { id: signature.body.id },
          expect: 200,
          record: false,
        }),
      (r) => r.body.thumbnail,
      "the signature's thumbnail",
    );
    await w.send({ op: "downloadSignature", url: signed.body.file, expect: 200 });
    await w.send({ op: "downloadSignatureThumbnail", url: signed.body.thumbnail, expect: 200 });
    await w.send({ op: "listSignatures", token: admin(), expect: 200 });
    await w.send({ op: "retrieveSignature", token: admin(), path: { id: signature.body.id }, expect: 200 });
    const task = w.rec.realId("task");
    await w.send({ op: "podTask", token: admin(), path: { id: task }, expect: 200 });
    await w.send({
      op: "podTask",
      token: admin(),
      path: { id: task },
      headers: { Accept: "application/pdf" },
      expect: 200,
    });
    await w.send({
      op: "partialUpdateSignature",
      token: admin(),
      path: { id: signature.body.id },
      example: "",
      expect: 200,
    });
    await w.send({ op: "batchDeleteSignatures", token: admin(), example: "", expect: 204 });
  });

  it("Routes and their optimization", async () => {
    const route = await w.send({
      op: "createRoute",
      token: admin(),
      example: "",
      expect: 201,
      name: "route",
    });
    await w.send({ op: "listRoutes", token: admin(), expect: 200 });
    await w.send({ op: "retrieveRoute", token: admin(), path: { id: route.body.id }, expect: 200 });
    await w.send({
      op: "updateRoute",
      token: admin(),
      path: { id: route.body.id },
      example: "",
      expect: 200,
    });
    await w.send({
      op: "partialUpdateRoute",
      token: admin(),
      path: { id: route.body.id },
      example: "",
      expect: 200,
    });

    const opt = await w.send({ op: "createRouteOptimization", token: admin(), example: "", expect: 202 });
    const done = await until(
      () =>
        w.send({
          op: "retrieveRouteOptimization",
          token: admin(),
          path: { id: opt.body.id },
          expect: 200,
          record: false,
        }),
      (r) => r.body.state === "completed" || r.body.state === "failed",
      "the route optimization",
      60_000,
    );
    expect(done.body.state, done.text).toBe("completed");
    await w.send({ op: "retrieveRouteOptimization", token: admin(), path: { id: opt.body.id }, expect: 200 });
    await w.send({ op: "listRouteOptimizations", token: admin(), expect: 200 });
    await w.send({ op: "reportRouteOptimization", token: admin(), path: { id: opt.body.id }, expect: 200 });
    await w.send({
      op: "reportRouteOptimization",
      token: admin(),
      path: { id: opt.body.id },
      query: "format=pdf",
      expect: 200,
    });
    const stuck = await w.send({
      op: "createRouteOptimization",
      token: admin(),
      body: w.example("createRouteOptimization", ""),
      expect: 202,
      record: false,
      env: { OPTIMIZATIONS_QUEUE: lostQueue },
    });
    await w.send({ op: "cancelRouteOptimization", token: admin(), path: { id: stuck.body.id }, expect: 200 });
    await w.send({ op: "activateRoute", token: admin(), path: { id: route.body.id }, expect: 200 });
    await w.send({ op: "archiveRoute", token: admin(), path: { id: route.body.id }, expect: 200 });
    await w.send({ op: "draftRoute", token: admin(), path: { id: route.body.id }, expect: 200 });
  });

  it("Trackers and the public page", async () => {
    const tracker = await w.send({ op: "createTracker", token: admin(), example: "", expect: 201 });
    ids.tracker = tracker.body.id;
    await w.send({ op: "listTrackers", token: admin(), expect: 200 });
    await w.send({ op: "retrieveTracker", token: admin(), path: { id: tracker.body.id }, expect: 200 });
    await w.send({
      op: "partialUpdateTracker",
      token: admin(),
      path: { id: tracker.body.id },
      example: "",
      expect: 200,
    });
    for (const accept of ["application/json", "text/html"]) {
      await w.send({
        op: "retrievePublicTracker",
        url: tracker.body.public_url,
        headers: { Accept: accept, "Accept-Language": "en-GB,en;q=0.8" },
        expect: 200,
      });
    }
    await w.send({ op: "retrievePublicTracker", url: `${BASE}/t/AAAAAAAAAAAAAAAAAAAAAA/`, expect: 404 });
    await w.send({ op: "retrieveTrackerLiveScript", expect: 200 });
    await w.send({
      op: "streamPublicTracker",
      url: `${tracker.body.public_url}stream/`,
      headers: { Upgrade: "websocket" },
      expect: 101,
      record: false,
    });
  });

  it("SMS and notification templates", async () => {
    const sms = await w.send({ op: "createSms", token: admin(), example: "", expect: 201 });
    await w.send({
      op: "createSms",
      token: admin(),
      body: w.example("createSms", ""),
      expect: 200,
      record: "The same message within the duplicate window: the SMS already queued",
    });
    await w.send({ op: "listSms", token: admin(), expect: 200 });
    await w.send({ op: "retrieveSms", token: admin(), path: { id: sms.body.id }, expect: 200 });
    await w.send({ op: "resendSms", token: admin(), path: { id: sms.body.id }, expect: 201 });
    const url = `${BASE}/sms/status/`;
    const form = new URLSearchParams({
      MessageSid: "SM0000000000000000000000000000test",
      MessageStatus: "delivered",
    });
    await w.send({
      op: "statusSms",
      raw: form.toString(),
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Twilio-Signature": await twilioSignature(env.TWILIO_AUTH_TOKEN!, url, form),
      },
      expect: 204,
    });

    const template = await w.send({
      op: "createNotificationTemplate",
      token: admin(),
      example: "",
      expect: 201,
    });
    ids.template = template.body.id;
    // The weekly task is done: its contact gets the e-mail of the template, with the POD attached.
    const weekly = `${BASE}/tasks/${ids.weekly}/`;
    const command = (token: string, action: string, extra: Record<string, unknown> = {}) =>
      w.send({
        op: "createTaskCommand",
        token,
        body: {
          task: weekly,
          external_id: `weekly-${action}`,
          time: "2030-06-03T07:00:00.000Z",
          action,
          ...extra,
        },
        expect: 201,
        record: false,
      });
    await command(admin(), "assign", { assignee: `${BASE}/users/${w.rec.realId("worker")}/` });
    for (const action of ["transit", "complete"]) {
      const r = await command(tokens.worker, action);
      expect(r.body.state, r.text).toBe("accepted");
    }
    const mail = await until(
      () => w.send({ op: "listOutbox", token: admin(), query: "page_size=500", expect: 200, record: false }),
      (r) => r.body.results.some((m: any) => m.attachments.length > 0),
      "the task_completed e-mail",
    );
    const attachment = mail.body.results.find((m: any) => m.attachments.length > 0).attachments[0];
    await w.send({ op: "downloadOutboxAttachment", url: attachment.file, expect: 200 });
    await w.send({ op: "listNotificationTemplates", token: admin(), expect: 200 });
    await w.send({
      op: "retrieveNotificationTemplate",
      token: admin(),
      path: { id: template.body.id },
      expect: 200,
    });
    await w.send({
      op: "updateNotificationTemplate",
      token: admin(),
      path: { id: template.body.id },
      example: "",
      expect: 200,
    });
    await w.send({
      op: "partialUpdateNotificationTemplate",
      token: admin(),
      path: { id: template.body.id },
      example: "",
      expect: 200,
    });
  });

  it("Forms, their fields and responses", async () => {
    const form = await w.send({ op: "createForm", token: admin(), example: "", expect: 201, name: "form" });
    await w.send({ op: "listForms", token: admin(), expect: 200 });
    await w.send({ op: "retrieveForm", token: admin(), path: { id: form.body.id }, expect: 200 });
    await w.send({ op: "updateForm", token: admin(), path: { id: form.body.id }, example: "", expect: 200 });
    await w.send({
      op: "partialUpdateForm",
      token: admin(),
      path: { id: form.body.id },
      example: "",
      expect: 200,
    });

    const field = await w.send({ op: "createFormField", token: admin(), example: "", expect: 201 });
    ids.field = field.body.id;
    await w.send({ op: "listFormFields", token: admin(), query: `form=${form.body.id}`, expect: 200 });
    await w.send({ op: "retrieveFormField", token: admin(), path: { id: field.body.id }, expect: 200 });
    await w.send({
      op: "updateFormField",
      token: admin(),
      path: { id: field.body.id },
      example: "",
      expect: 200,
    });
    await w.send({
      op: "partialUpdateFormField",
      token: admin(),
      path: { id: field.body.id },
      example: "",
      expect: 200,
    });

    const response = await w.send({ op: "createFormResponse", token: admin(), example: "", expect: 201 });
    await w.send({ op: "listFormResponses", token: admin(), expect: 200 });
    await w.send({ op: "retrieveFormResponse", token: admin(), path: { id: response.body.id }, expect: 200 });
    await w.send({
      op: "updateFormResponse",
      token: admin(),
      path: { id: response.body.id },
      example: "",
      expect: 200,
    });
    await w.send({
      op: "partialUpdateFormResponse",
      token: admin(),
      path: { id: response.body.id },
      example: "",
      expect: 200,
    });
    await w.send({ op: "completeFormResponse", token: admin(), path: { id: response.body.id }, expect: 200 });
  });

  it("Recurrences", async () => {
    const rec = await w.send({ op: "createRecurrence", token: admin(), example: "", expect: 201 });
    ids.recurrence = rec.body.id;
    await w.send({ op: "listRecurrences", token: admin(), expect: 200 });
    await w.send({ op: "retrieveRecurrence", token: admin(), path: { id: rec.body.id }, expect: 200 });
    await w.send({
      op: "updateRecurrence",
      token: admin(),
      path: { id: rec.body.id },
      example: "",
      expect: 200,
    });
    await w.send({
      op: "partialUpdateRecurrence",
      token: admin(),
      path: { id: rec.body.id },
      example: "",
      expect: 200,
    });
  });

  it("Exports and imports", async () => {
    for (const kind of ["TaskExport", "ContactAddressExport"]) {
      const created = await w.send({ op: `create${kind}`, token: admin(), example: "", expect: 202 });
      const done = await until(
        () =>
          w.send({
            op: `retrieve${kind}`,
            token: admin(),
            path: { id: created.body.id },
            expect: 200,
            record: false,
          }),
        (r) => r.body.state === "completed" || r.body.state === "failed",
        `the ${kind}`,
      );
      expect(done.body.state, done.text).toBe("completed");
      await w.send({ op: `retrieve${kind}`, token: admin(), path: { id: created.body.id }, expect: 200 });
      await w.send({ op: `list${kind}s`, token: admin(), expect: 200 });
      if (kind === "TaskExport") await w.send({ op: "downloadExport", url: done.body.file, expect: 200 });
      await w.send({ op: `destroy${kind}`, token: admin(), path: { id: created.body.id }, expect: 204 });
      // An export whose queue message never arrives stays queued: it can be cancelled.
      const stuck = await w.send({
        op: `create${kind}`,
        token: admin(),
        body: w.example(`create${kind}`, ""),
        expect: 202,
        record: false,
        env: { EXPORTS_QUEUE: lostQueue },
      });
      await w.send({ op: `cancel${kind}`, token: admin(), path: { id: stuck.body.id }, expect: 200 });
    }
    const stuckImport = await w.send({
      op: "createImport",
      token: admin(),
      body: w.example("createImport", ""),
      expect: 202,
      record: false,
      env: { IMPORTS_QUEUE: lostQueue },
    });
    await w.send({ op: "cancelImport", token: admin(), path: { id: stuckImport.body.id }, expect: 200 });
    const imported = await w.send({ op: "createImport", token: admin(), example: "", expect: 202 });
    const done = await until(
      () =>
        w.send({
          op: "retrieveImport",
          token: admin(),
          path: { id: imported.body.id },
          expect: 200,
          record: false,
        }),
      (r) => r.body.state === "completed" || r.body.state === "failed",
      "the import",
    );
    expect(done.body.state, done.text).toBe("completed");
    await w.send({ op: "retrieveImport", token: admin(), path: { id: imported.body.id }, expect: 200 });
    await w.send({ op: "listImports", token: admin(), expect: 200 });
    await w.send({ op: "listOutbox", token: admin(), expect: 200 });
    await w.send({ op: "listArchives", token: admin(), expect: 200 });
  });

  it("Deletes, and signing out", async () => {
    const t = admin();
    // A draft response (a completed one is read-only) and a signature of its own, to delete.
    const draft = await w.send({
      op: "createFormResponse",
      token: t,
      body: { form: `${BASE}/forms/${w.rec.realId("form")}/`, data: {} },
      expect: 201,
      record: false,
    });
    await w.send({ op: "destroyFormResponse", token: t, path: { id: draft.body.id }, expect: 204 });
    await w.send({ op: "destroyFormField", token: t, path: { id: ids.field }, expect: 204 });
    await w.send({ op: "destroyForm", token: t, path: { id: w.rec.realId("form") }, expect: 204 });
    await w.send({ op: "destroyRecurrence", token: t, path: { id: ids.recurrence }, expect: 204 });
    await w.send({ op: "destroyNotificationTemplate", token: t, path: { id: ids.template }, expect: 204 });
    await w.send({ op: "destroyTracker", token: t, path: { id: ids.tracker }, expect: 204 });
    await w.send({ op: "destroyRoute", token: t, path: { id: w.rec.realId("route") }, expect: 204 });
    const fu = await w.send({
      op: "createFileUpload",
      token: t,
      body: { file_name: "second signature.png", file_type: "image/png" },
      expect: 201,
      record: false,
    });
    await upload(fu.body, await pngBytes(16, 16), "image/png");
    const extra = await w.send({
      op: "createSignature",
      token: t,
      body: {
        account: `${BASE}/accounts/${w.rec.realId("account")}/`,
        task: `${BASE}/tasks/${w.rec.realId("task")}/`,
        file_upload: fu.body.url,
        signer_name: "Aino Virtanen",
      },
      expect: 201,
      record: false,
    });
    await w.send({ op: "destroySignature", token: t, path: { id: extra.body.id }, expect: 204 });
    await w.send({ op: "destroyDocument", token: t, path: { id: w.rec.realId("photo") }, expect: 204 });
    await w.send({ op: "destroyOrder", token: t, path: { id: ids.batchOrder }, expect: 204 });
    await w.send({ op: "destroyTask", token: t, path: { id: ids.batchTask }, expect: 204 });
    await w.send({
      op: "destroyContactAddress",
      token: t,
      path: { id: w.rec.realId("contactAddress") },
      expect: 204,
    });
    await w.send({ op: "destroyClient", token: t, path: { id: w.rec.realId("client") }, expect: 204 });
    await w.send({ op: "destroyMetafield", token: t, path: { id: w.rec.realId("metafield") }, expect: 204 });
    await w.send({ op: "destroyWebhook", token: t, path: { id: w.rec.realId("webhook") }, expect: 204 });
    await w.send({ op: "destroyAccountRole", token: t, path: { id: ids.managerRole }, expect: 204 });
    await w.send({
      op: "destroySessionToken",
      token: tokens.integration,
      path: { id: ids.session },
      expect: 204,
    });
    await w.send({ op: "logout", token: t, expect: 204 });
    await w.send({ op: "retrieveCurrentUser", token: t, expect: 401 });
  });

  it("answered every operation with a success, and every answer as documented", () => {
    const missing = operationsOf(w.doc)
      .map((o) => o.op.operationId as string)
      // A success: a 2xx, or 101 for the WebSocket upgrades (the live streams).
      .filter(
        (id) => ![...w.covered].some((c) => c.startsWith(`${id} `) && /^(2|101$)/.test(c.split(" ")[1])),
      );
    expect(missing).toEqual([]);
    expect(w.problems).toEqual([]);
  });

  it("sent every request example, in document order, each with its documented success", () => {
    expect(w.examplesSent.map((e) => e.replace("\u0000", ": "))).toEqual(
      w.documentedExamples().map((e) => e.replace("\u0000", ": ")),
    );
  });

  it("recorded the answers the document shows (npm run openapi:examples writes them)", async () => {
    const text = `${JSON.stringify({ responses: sortKeys(w.recorded) }, null, 2)}\n`;
    await expect(text).toMatchFileSnapshot("../../src/http/openapi-examples.generated.json");
  });
});

/** Operations, statuses and media types in a stable order (summaries keep the walk's order). */
function sortKeys(recorded: Walk["recorded"]) {
  const sorted = <T>(o: Record<string, T>) =>
    Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
  return sorted(
    Object.fromEntries(
      Object.entries(recorded).map(([op, byStatus]) => [
        op,
        sorted(Object.fromEntries(Object.entries(byStatus).map(([s, byMedia]) => [s, sorted(byMedia)]))),
      ]),
    ),
  );
}
