import { DurableObject } from "cloudflare:workers";
import { COMMAND_UUIDS, jsonRowColumns, TASK_COMMAND_COLUMNS, uuidBytes } from "../../src/db/uuid-bytes";
import { byteLimiter, parseMultipartForm } from "../../src/s3/multipart";
import { putStream } from "../../src/s3/r2-put";

/**
 * The floor the benchmark compares the service against: a minimal Worker on the same
 * runtime doing only the primitive under each endpoint, with no routing, auth or JSON work.
 *   GET  /read?id=...   one D1 read by primary key, in a D1 session (Sessions API) as every
 *                       request of the service reads (contract §24): the local runtime's D1
 *                       persists a bookmark, one SQLite write and fsync, on every call made in a
 *                       session, which a read outside one does not pay; `&plain=1` reads outside
 *                       a session (a diagnostic: the floor before §24)
 *   POST /write?id=...  one Durable Object RPC whose body is one D1 batch write (with
 *                       shape=indexed: one command's rows in the service's schema, see below)
 *   POST /write-many?n=100&shape=run
 *                       n of those RPCs at once in one request; with shape=run each batch has
 *                       the writes of one task's run of 5 commands (the row, 5 log rows, 5
 *                       event rows of 2 KB): the runtime's own price of a task in a batch
 *                       with shape=indexed, the same rows into tables shaped as the service's
 *                       (the columns a command writes and every index over them: the task's
 *                       updated_at, position and route indexes, the command table's four b-trees,
 *                       the events clustered on (account, id); UUIDs as 16 bytes, as the service
 *                       keeps them): the price of these writes in the service's schema; with
 *                       shape=group, the same rows returned by each object and written in one
 *                       D1 transaction by the request (the service's group commit)
 *   POST /upload        the request body streamed into R2 (a known length, no parsing)
 */
type FloorEnv = { DB: D1Database; FLOOR_DO: DurableObjectNamespace<FloorDO>; FILES: R2Bucket };

/**
 * The command row's columns (the service's task_commands), for shape=indexed; the UUIDs among
 * them stored as 16 bytes, as the service stores them (its migration 0036).
 */
const COMMAND_COLUMNS = TASK_COMMAND_COLUMNS;
/** A UUID standing for a floor row's id (`row-<n>`) where the service's column holds a task's. */
const taskUuid = (id: string) =>
  `00000000-0000-7000-8000-${(id.match(/\d+/)?.[0] ?? "0").padStart(12, "0").slice(-12)}`;
const ACCOUNT = "00000000-0000-7000-8000-000000000001";

/** `count` command rows of the floor row `id` (a task of the service's schema), as stored. */
const indexedCommands = (id: string, now: number, count: number) =>
  Array.from({ length: count }, () => {
    const cid = crypto.randomUUID();
    return [
      cid,
      ACCOUNT,
      taskUuid(id),
      `ext-${cid}`,
      "update",
      now,
      null,
      '{"position":1}',
      "",
      null,
      ACCOUNT,
      "accepted",
      "",
      now,
      null,
      now,
      now,
    ];
  });

export class FloorDO extends DurableObject<FloorEnv> {
  /** shape=group: one command run's rows in the service's schema, returned instead of written. */
  plan(id: string, n: number, count = 5) {
    const now = Date.now();
    const commands = indexedCommands(id, now, count);
    return {
      task: [id, n, now],
      commands,
      events: commands.map((c) => [c[0], ACCOUNT, "e".repeat(2000), now]),
    };
  }

  async write(id: string, n: number, shape = "", count = 5): Promise<number> {
    const now = Date.now();
    if (shape === "indexed") {
      const commands = indexedCommands(id, now, count);
      const events = commands.flatMap((c) => [c[0], ACCOUNT, id, "e".repeat(2000), now]);
      await this.env.DB.batch([
        this.env.DB.prepare("UPDATE floor_tasks SET position = ?, updated_at = ? WHERE id = ?").bind(
          n,
          now,
          id,
        ),
        this.env.DB.prepare(
          `INSERT INTO floor_commands (${COMMAND_COLUMNS.join(", ")}) SELECT ${jsonRowColumns(COMMAND_COLUMNS, COMMAND_UUIDS)} FROM json_each(?)`,
        ).bind(JSON.stringify(commands)),
        this.env.DB.prepare(
          `INSERT INTO floor_task_events (id, account_id, payload, created_at)
           SELECT ${uuidBytes("column1")}, ${uuidBytes("column2")}, column4, column5 FROM (VALUES ${commands.map(() => "(?, ?, ?, ?, ?)").join(", ")})`,
        ).bind(...events),
      ]);
      return n;
    }
    if (shape === "run") {
      const rows = Array.from({ length: 5 }, () => [crypto.randomUUID(), id, now, "e".repeat(2000)]);
      await this.env.DB.batch([
        this.env.DB.prepare("UPDATE floor_rows SET n = ?, updated_at = ? WHERE id = ?").bind(n, now, id),
        this.env.DB.prepare(
          "INSERT INTO floor_log (id, row_id, created_at) SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?)",
        ).bind(JSON.stringify(rows.map((r) => r.slice(0, 3)))),
        this.env.DB.prepare(
          `INSERT INTO floor_events (id, row_id, created_at, payload) SELECT * FROM (VALUES ${rows.map(() => "(?, ?, ?, ?)").join(", ")})`,
        ).bind(...rows.flat()),
      ]);
      return n;
    }
    await this.env.DB.batch([
      this.env.DB.prepare("UPDATE floor_rows SET n = ?, updated_at = ? WHERE id = ?").bind(n, now, id),
      this.env.DB.prepare("INSERT INTO floor_log (id, row_id, created_at) VALUES (?, ?, ?)").bind(
        crypto.randomUUID(),
        id,
        now,
      ),
    ]);
    return n;
  }
}

export default {
  async fetch(req: Request, env: FloorEnv): Promise<Response> {
    const url = new URL(req.url);
    const id = url.searchParams.get("id") ?? "";
    if (url.pathname === "/setup") {
      await env.DB.batch([
        env.DB.prepare(
          "CREATE TABLE IF NOT EXISTS floor_rows (id TEXT PRIMARY KEY, n INTEGER, payload TEXT, updated_at INTEGER)",
        ),
        env.DB.prepare(
          "CREATE TABLE IF NOT EXISTS floor_log (id TEXT PRIMARY KEY, row_id TEXT, created_at INTEGER)",
        ),
        env.DB.prepare(
          "CREATE TABLE IF NOT EXISTS floor_events (id TEXT PRIMARY KEY, row_id TEXT, created_at INTEGER, payload TEXT)",
        ),
      ]);
      // shape=indexed: the service's columns and indexes for what a command writes.
      await env.DB.batch(
        [
          "CREATE TABLE IF NOT EXISTS floor_tasks (id TEXT PRIMARY KEY, account_id TEXT, route_id TEXT, position REAL, updated_at INTEGER)",
          "CREATE INDEX IF NOT EXISTS floor_tasks_updated ON floor_tasks (account_id, updated_at, id)",
          "CREATE INDEX IF NOT EXISTS floor_tasks_position ON floor_tasks (account_id, position, id)",
          "CREATE INDEX IF NOT EXISTS floor_tasks_route ON floor_tasks (account_id, route_id, position, id)",
          `CREATE TABLE IF NOT EXISTS floor_commands (id BLOB PRIMARY KEY, account_id BLOB NOT NULL, task_id BLOB NOT NULL,
            external_id TEXT NOT NULL, action TEXT NOT NULL, time INTEGER NOT NULL, assignee_id BLOB, task_data TEXT NOT NULL,
            notes TEXT NOT NULL, location TEXT, user_id BLOB, state TEXT NOT NULL, error_message TEXT NOT NULL,
            accepted_at INTEGER, rejected_at INTEGER, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
          "CREATE UNIQUE INDEX IF NOT EXISTS floor_commands_external ON floor_commands (account_id, external_id)",
          "CREATE INDEX IF NOT EXISTS floor_commands_created ON floor_commands (account_id, created_at, id)",
          "CREATE INDEX IF NOT EXISTS floor_commands_task ON floor_commands (task_id, created_at, id)",
          "CREATE INDEX IF NOT EXISTS floor_commands_pending ON floor_commands (created_at, id) WHERE state = 'pending'",
          // The service's events: clustered on (account_id, id) (its migrations 0025 and 0036).
          `CREATE TABLE IF NOT EXISTS floor_task_events (id BLOB NOT NULL, account_id BLOB NOT NULL, payload TEXT,
            created_at INTEGER, PRIMARY KEY (account_id, id)) WITHOUT ROWID`,
        ].map((sql) => env.DB.prepare(sql)),
      );
      await env.DB.batch(
        Array.from({ length: 100 }, (_, i) =>
          env.DB.prepare(
            "INSERT OR IGNORE INTO floor_tasks (id, account_id, route_id, position, updated_at) VALUES (?, ?, NULL, 0, 0)",
          ).bind(`row-${i}`, ACCOUNT),
        ),
      );
      const stmts = Array.from({ length: 100 }, (_, i) =>
        env.DB.prepare(
          "INSERT OR IGNORE INTO floor_rows (id, n, payload, updated_at) VALUES (?, 0, ?, 0)",
        ).bind(`row-${i}`, "x".repeat(600)),
      );
      await env.DB.batch(stmts);
      return new Response("ok");
    }
    if (url.pathname === "/read") {
      // A GET without a bookmark starts its session anywhere, as the service's does (http/middleware.ts).
      const db = url.searchParams.get("plain") === "1" ? env.DB : env.DB.withSession("first-unconstrained");
      const row = await db.prepare("SELECT * FROM floor_rows WHERE id = ?").bind(id).first();
      return Response.json(row);
    }
    if (url.pathname === "/upload") {
      // The runtime's own floor for a streamed upload: the request body straight into R2.
      const length = Number(req.headers.get("Content-Length"));
      const fixed = new FixedLengthStream(length);
      const put = env.FILES.put(`floor/${crypto.randomUUID()}`, fixed.readable);
      await req.body!.pipeTo(fixed.writable);
      await put;
      return new Response(null, { status: 204 });
    }
    if (url.pathname === "/upload-form") {
      // Diagnostic: the storage endpoint's own pipeline (multipart parser → byte counter →
      // R2 parts), without the rest of the service, to tell its memory from the service's.
      const form = await parseMultipartForm(req.body, req.headers.get("Content-Type"));
      const limiter = byteLimiter({ max: 200 * 1024 * 1024 });
      await putStream(
        env.FILES,
        `floor/${crypto.randomUUID()}`,
        form.file!.stream.pipeThrough(limiter.stream),
      );
      return new Response(null, { status: 204 });
    }
    if (url.pathname === "/upload-parts") {
      // The same body into R2 as a multipart upload of 8 MiB parts: the primitive the storage
      // endpoint needs for a body of unknown length.
      const upload = await env.FILES.createMultipartUpload(`floor/${crypto.randomUUID()}`);
      const parts: R2UploadedPart[] = [];
      const size = 8 * 1024 * 1024;
      let buf = new Uint8Array(size);
      let fill = 0;
      const reader = req.body!.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        let off = 0;
        while (off < value.length) {
          const n = Math.min(size - fill, value.length - off);
          buf.set(value.subarray(off, off + n), fill);
          fill += n;
          off += n;
          if (fill === size) {
            parts.push(await upload.uploadPart(parts.length + 1, buf));
            buf = new Uint8Array(size);
            fill = 0;
          }
        }
      }
      if (fill) parts.push(await upload.uploadPart(parts.length + 1, buf.subarray(0, fill)));
      await upload.complete(parts);
      return new Response(null, { status: 204 });
    }
    if (url.pathname === "/write-many" && url.searchParams.get("shape") === "group") {
      // The service's way since its group commit: each row's object returns its run's rows,
      // and the request writes them all in one D1 transaction (one statement per table).
      const n = Math.min(1000, Number(url.searchParams.get("n") ?? 100));
      const plans = await Promise.all(
        Array.from({ length: n }, (_, i) => {
          const rid = `row-${i % 100}`;
          return env.FLOOR_DO.get(env.FLOOR_DO.idFromName(rid)).plan(rid, i);
        }),
      );
      await env.DB.batch([
        env.DB.prepare(
          "UPDATE floor_tasks SET position = j.value ->> 1, updated_at = j.value ->> 2 FROM json_each(?) AS j WHERE floor_tasks.id = j.value ->> 0",
        ).bind(JSON.stringify(plans.map((p) => p.task))),
        env.DB.prepare(
          `INSERT INTO floor_commands (${COMMAND_COLUMNS.join(", ")}) SELECT ${jsonRowColumns(COMMAND_COLUMNS, COMMAND_UUIDS)} FROM json_each(?)`,
        ).bind(JSON.stringify(plans.flatMap((p) => p.commands))),
        env.DB.prepare(
          `INSERT INTO floor_task_events (id, account_id, payload, created_at) SELECT ${uuidBytes("value ->> 0")}, ${uuidBytes("value ->> 1")}, value ->> 2, value ->> 3 FROM json_each(?)`,
        ).bind(JSON.stringify(plans.flatMap((p) => p.events))),
      ]);
      return Response.json({ n });
    }
    if (url.pathname === "/write-many") {
      // Capped: a few thousand calls in flight exhaust the local runtime's file handles.
      const n = Math.min(1000, Number(url.searchParams.get("n") ?? 100));
      const shape = url.searchParams.get("shape") ?? "";
      await Promise.all(
        Array.from({ length: n }, (_, i) => {
          const rid = `row-${i % 100}`;
          return env.FLOOR_DO.get(env.FLOOR_DO.idFromName(rid)).write(rid, i, shape);
        }),
      );
      return Response.json({ n });
    }
    if (url.pathname === "/write") {
      // shape=indexed: one command's writes (the task row, a command row, its event) into the
      // service's schema, beside the plain write (the row and one log row).
      const stub = env.FLOOR_DO.get(env.FLOOR_DO.idFromName(id));
      const shape = url.searchParams.get("shape") ?? "";
      return Response.json({ n: await stub.write(id, Math.floor(Math.random() * 1e6), shape, 1) });
    }
    return new Response("not found", { status: 404 });
  },
};
