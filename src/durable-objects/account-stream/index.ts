import { DurableObject } from "cloudflare:workers";
import { accountDatabase } from "../../db/shards";
import { uuidBytes, uuidText } from "../../db/uuid-bytes";
import { clientFrame, taskIdsOf, workerView } from "../../domain/live";
import type { Quantized } from "../../domain/positions-codec";
import type { HiddenFields } from "../../domain/worker-view";
import { reverse } from "../../http/urls";
import { uuidv7 } from "../../lib/ids";
import { eventPageSql, type StoredPayload, withTexts } from "../../services/events/payloads";
import { hiddenFormFields } from "../../services/forms/worker-view";
import { AutoAssigner } from "./auto-assign";
import { notifyLate } from "./late";
import { type Fix, type PositionStats, PositionStore, type PositionsCall } from "./positions";

/**
 * One per account: the live fan-out of its events (contract §25) to dispatch screens
 * (`/events/stream/`) and tracking pages (`/t/<token>/stream/`), over WebSockets held with the
 * Hibernation API, so connections that wait cost no Durable Object duration. It is never the
 * source of truth: the events table is. The write path pokes it after a commit; it then reads
 * the account's events written since the last it sent (with an overlap of a few seconds, so an
 * event committed late by another writer with an older id is still sent, once) and sends each
 * socket what its role may see and its `types` ask for, in id order. A socket carries, in its
 * attachment (kept across hibernation), who it is and the last event id it got.
 */

type Attachment =
  | {
      kind: "events";
      userId: string;
      role: string;
      tokenId: string;
      types: string[] | null;
      /** Every event id up to here was sent or skipped (the replay's start, then settled ids). */
      floor: string;
      /** The highest id processed, and when (ms). */
      last: string;
      at: number;
    }
  | { kind: "tracker"; trackerId: string; taskIds: string[] };

/** An event with its payload's JSON text (services/events/payloads.ts). */
type EventRow = { id: string; type: string; text: string; created_at: number };
/** A row decoded once per read, whatever the number of sockets it goes to. */
type Decoded = {
  id: string;
  type: string;
  created_at: number;
  data: Record<string, unknown>;
  message: string;
  /** A worker's rendering (domain/live.ts), per worker: its message, or null when it may not see it. */
  forWorker?: Map<string, string | null>;
};

/** What one page of the fan-out shares between sockets. */
type Pass = { decoded: Map<string, Decoded>; hidden: HiddenFields };

export type StreamStats = {
  /** Open sockets (dispatch screens and tracking pages). */
  connections: number;
  /** How many times the object has been started: its first start, then once per wake from hibernation. */
  wakes: number;
  /** When this instance started (ms): the object has been awake since then. */
  awake_since: number;
  /** Workers' positions kept here (contract §28). */
  positions: PositionStats;
};

/** `worker.position` messages go out at most once per user per this long (contract §28). */
const POSITION_MESSAGE_MS = 5_000;
/** A lateness check runs this long after the position or command that asked for it. */
const LATE_CHECK_MS = 2_000;
/** Positions go to their trails (and a failed copy of the latest to D1) this long after they arrive. */
const MIRROR_MS = 1_000;

/** How far back a poke looks behind the last id sent (ms): covers a writer's late commit. */
const OVERLAP_MS = 5_000;
const PAGE = 500;
/** Sockets served before the fan-out yields once. */
const FAN_OUT_SLICE = 16;

const idFloor = (ms: number) => {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0").slice(-12);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
};
/** The greater and the lesser of two ids (UUIDv7 text sorts by time). */
const later = (a: string, b: string) => (a > b ? a : b);
const earlier = (a: string, b: string) => (a < b ? a : b);

export type ConnectEvents = {
  accountId: string;
  userId: string;
  role: string;
  tokenId: string;
  /** The admin behind a hijack token (contract §14), whose standing the stream also hangs on. */
  actorUserId: string | null;
  types: string[] | null;
  /** Replay what came after this event id first (null: live from now on). */
  after: string | null;
  caps: { perUser: number; perAccount: number };
};

/** The sockets `revoke` and `tokensOf` look at for a user: theirs, and hijack streams they opened. */
const EVENTS_TAG = "events";
const userTag = (userId: string) => `user:${userId}`;
const actorTag = (userId: string) => `actor:${userId}`;

/** Past a cap the upgrade is refused; the Worker answers it as 429 (services/live). */
const capReached = (detail: string) =>
  new Response(JSON.stringify({ detail }), { status: 429, headers: { "Content-Type": "application/json" } });

export class AccountStreamDO extends DurableObject<Env> {
  /** Ids sent lately, per socket (memory only: lost with hibernation, which only follows quiet). */
  private recent = new WeakMap<WebSocket, Map<string, number>>();
  private accountId: string | null = null;
  private readonly startedAt = Date.now();
  private fanOut: Promise<number> | null = null;
  private again = false;
  private wakes = 0;
  readonly positions: PositionStore;
  private readonly assigner: AutoAssigner;
  /** When each user's last `worker.position` message went out (memory: a restart may send one early). */
  private positionSent = new Map<string, number>();
  /** A position that came too soon after the last message: sent when its 5 s are up. */
  private positionHeld = new Map<string, { fix: Fix; baseUrl: string }>();
  /** Users whose tasks' lateness is to be checked at the next alarm, and the base URL of its events. */
  private lateDue = new Set<string>();
  private baseUrl = "";

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.positions = new PositionStore(ctx, env);
    this.assigner = new AutoAssigner(ctx, env, (users) => this.positions.latest(users));
    // Counted so that hibernation can be observed (GET /events/stream_stats/): a start after
    // the first is a wake. One storage write per start; nothing while asleep.
    ctx.blockConcurrencyWhile(async () => {
      this.wakes = ((await ctx.storage.get<number>("wakes")) ?? 0) + 1;
      await ctx.storage.put("wakes", this.wakes);
    });
  }

  async stats(): Promise<StreamStats> {
    return {
      connections: this.ctx.getWebSockets().length,
      wakes: this.wakes,
      awake_since: this.startedAt,
      positions: this.positions.stats(),
    };
  }

  /**
   * A batch of one user's positions (contract §28, services/positions): stored here, flushed to
   * D1 by the alarm; the user's latest position goes to the streams allowed to see it and to D1's
   * copy (before the answer, for ETAs), and the user's tasks are checked for lateness shortly after.
   */
  async recordPositions(
    call: PositionsCall & { baseUrl: string },
  ): Promise<{ stored: number; dropped: number }> {
    await this.remember(call.accountId);
    this.baseUrl = call.baseUrl;
    const { stored, dropped, moved } = await this.positions.record(call);
    if (stored) {
      if (moved) {
        this.sendPosition(call.userId, moved, call.baseUrl);
        this.lateDue.add(call.userId);
        await this.positions.mirrorSoon(call.accountId);
      }
      await this.arm();
    }
    return { stored, dropped };
  }

  /** The latest positions of `users` (those that have one). */
  async latestPositions(users: string[]): Promise<Map<string, Fix>> {
    return this.positions.latest(users);
  }

  /** A user's positions not yet flushed to D1, in time order, between `from` and `to` (ms). */
  async pendingPositions(user: string, from: number, to: number): Promise<Quantized[]> {
    return this.positions.pendingOf(user, from, to);
  }

  /**
   * Check these users' tasks for lateness soon (after a command that changes their lists, and
   * from the cron each minute, when time alone may make a task late).
   */
  async checkLate(accountId: string, users: string[], baseUrl: string): Promise<void> {
    await this.remember(accountId);
    if (baseUrl) this.baseUrl = baseUrl;
    for (const u of users) this.lateDue.add(u);
    if (this.lateDue.size) await this.arm();
  }

  /** Auto-assign (contract §29), one insertion at a time per account: these tasks now, in order. */
  async autoAssign(accountId: string, taskIds: string[], baseUrl: string) {
    return this.assigner.run(accountId, taskIds, baseUrl);
  }

  /** After a write of an account with `auto_assign` `insert`: its new unassigned tasks of today placed. */
  async autoAssignSoon(accountId: string, baseUrl: string): Promise<number> {
    return this.assigner.sweep(accountId, baseUrl);
  }

  /**
   * The alarm, at most a second after positions arrive (MIRROR_MS) or two after a lateness check
   * was asked for (LATE_CHECK_MS): the latest positions copied to D1, due lateness checks, and
   * the waiting positions written to their trails. A burst of positions from many workers costs
   * one pass: a few statements, whatever the number of workers.
   */
  async alarm(): Promise<void> {
    const accountId = await this.account();
    if (!accountId) return;
    const now = Date.now();
    // The copy first: the lateness check reads ETAs from D1.
    if (this.positions.mirrorDue()) await this.positions.mirrorLatest(accountId);
    if (this.lateDue.size) {
      const users = [...this.lateDue];
      this.lateDue.clear();
      await this.notifyLate(accountId, users, now);
    }
    await this.positions.flush(accountId);
    await this.arm();
  }

  /** The alarm at the earliest of the next flush and a due lateness check. */
  private async arm() {
    const now = Date.now();
    const due = [
      this.lateDue.size ? now + LATE_CHECK_MS : null,
      this.positions.mirrorDue() || this.positions.stats().buffered ? now + MIRROR_MS : null,
    ].filter((x): x is number => x !== null);
    if (!due.length) return;
    const at = Math.min(...due);
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  /** `task.late` for the late tasks of `users` (./late.ts), then sent to the open streams. */
  private async notifyLate(accountId: string, users: string[], now: number) {
    const baseUrl = this.baseUrl || this.env.PUBLIC_BASE_URL || "";
    const told = await notifyLate(this.ctx, this.env, this.positions, { accountId, users, now, baseUrl });
    if (told) await this.fanOutNew();
  }

  private sendHeld(userId: string) {
    const held = this.positionHeld.get(userId);
    this.positionHeld.delete(userId);
    if (held) this.sendPosition(userId, held.fix, held.baseUrl);
  }

  /** `worker.position` (live only) to the streams allowed to see it: dispatchers, and the user itself. */
  private sendPosition(userId: string, fix: Fix, baseUrl: string) {
    const now = Date.now();
    const wait = (this.positionSent.get(userId) ?? 0) + POSITION_MESSAGE_MS - now;
    if (wait > 0) {
      // Too soon after the last: the newest goes when the 5 s are up (the marker never stays
      // behind a position the server has), later ones replacing it meanwhile.
      const held = this.positionHeld.get(userId);
      this.positionHeld.set(userId, { fix, baseUrl });
      if (!held) setTimeout(() => this.sendHeld(userId), wait);
      return;
    }
    this.positionSent.set(userId, now);
    const message = JSON.stringify({
      id: uuidv7(now),
      type: "worker.position",
      created_at: new Date(now).toISOString(),
      data: {
        user: reverse(baseUrl, "users", userId),
        location: { type: "Point", coordinates: [fix.lon, fix.lat] },
        time: new Date(fix.time).toISOString(),
        accuracy_m: fix.accuracy_m,
      },
    });
    for (const ws of this.ctx.getWebSockets(EVENTS_TAG)) {
      const att = ws.deserializeAttachment() as Attachment;
      if (att.kind !== "events") continue;
      if (att.role === "worker" && att.userId !== userId) continue;
      if (att.types && !att.types.includes("worker.position")) continue;
      try {
        ws.send(message);
      } catch {}
    }
  }

  private async account(): Promise<string> {
    this.accountId ??= (await this.ctx.storage.get<string>("account")) ?? "";
    return this.accountId;
  }

  /**
   * The upgrade, from the Worker only (it has spent the ticket, or found the tracker): a
   * WebSocket cannot travel through RPC, so the connection's facts come in `X-Stream`.
   */
  async fetch(request: Request): Promise<Response> {
    const facts = JSON.parse(request.headers.get("X-Stream") ?? "{}");
    if (new URL(request.url).pathname === "/tracker") return this.connectTracker(facts);
    return this.connectEvents(facts);
  }

  /** A dispatch screen: the socket, after the replay of what came after `after`. */
  private async connectEvents(c: ConnectEvents): Promise<Response> {
    await this.remember(c.accountId);
    if (this.ctx.getWebSockets(userTag(c.userId)).length >= c.caps.perUser)
      return capReached(`Too many open streams for this user (at most ${c.caps.perUser}); close one first.`);
    if (this.ctx.getWebSockets(EVENTS_TAG).length >= c.caps.perAccount)
      return capReached(
        `Too many open streams in this account (at most ${c.caps.perAccount}); close one first.`,
      );
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    const start = c.after ?? (await this.newestId(c.accountId)) ?? idFloor(Date.now());
    const att: Attachment = {
      kind: "events",
      userId: c.userId,
      role: c.role,
      tokenId: c.tokenId,
      types: c.types,
      floor: start,
      last: start,
      at: Date.now(),
    };
    const tags = [userTag(c.userId), EVENTS_TAG];
    if (c.actorUserId) tags.push(actorTag(c.actorUserId));
    this.ctx.acceptWebSocket(server, tags);
    server.serializeAttachment(att);
    // The replay and then anything written meanwhile: the same read as a poke.
    await this.sendNew([server]);
    return new Response(null, { status: 101, webSocket: client });
  }

  /** A tracking page: told `changed` when one of its tasks has an event (no data: it reads the page again). */
  private async connectTracker(c: {
    accountId: string;
    trackerId: string;
    taskIds: string[];
    cap: number;
  }): Promise<Response> {
    await this.remember(c.accountId);
    if (this.ctx.getWebSockets(`tracker:${c.trackerId}`).length >= c.cap)
      return capReached(`Too many open streams for this tracking page (at most ${c.cap}).`);
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    this.ctx.acceptWebSocket(server, [`tracker:${c.trackerId}`]);
    server.serializeAttachment({
      kind: "tracker",
      trackerId: c.trackerId,
      taskIds: c.taskIds,
    } satisfies Attachment);
    const hwm =
      (await this.ctx.storage.get<string>("hwm")) ??
      (await this.newestId(c.accountId)) ??
      idFloor(Date.now());
    await this.ctx.storage.put("hwm", hwm);
    return new Response(null, { status: 101, webSocket: client });
  }

  /**
   * The write path's call after a commit: send what is new. Cheap with nobody connected. A write
   * may move the ETAs of workers whose positions this object keeps: their tasks are checked for
   * lateness shortly after (one check for a burst of writes).
   */
  async poke(): Promise<number> {
    const known = this.positions.knownUsers();
    if (known.length) {
      for (const u of known) this.lateDue.add(u);
      await this.arm();
    }
    return this.fanOutNew();
  }

  /** Sends what is new to the open sockets (one pass at a time, see `poke`). */
  private async fanOutNew(): Promise<number> {
    if (!this.ctx.getWebSockets().length) return 0;
    // One fan-out at a time: pokes that arrive meanwhile are folded into one more pass (a burst
    // of writes costs a read per pass, not per write), which also reads what they wrote.
    if (this.fanOut) {
      this.again = true;
      return this.fanOut;
    }
    this.fanOut = (async () => {
      let sent = 0;
      do {
        this.again = false;
        sent += await this.sendNew(this.ctx.getWebSockets());
      } while (this.again);
      return sent;
    })().finally(() => {
      this.fanOut = null;
    });
    return this.fanOut;
  }

  /** The event streams of `userId`, and those it opened as another user with a hijack token. */
  private socketsOf(userId: string): WebSocket[] {
    return [
      ...new Set([...this.ctx.getWebSockets(userTag(userId)), ...this.ctx.getWebSockets(actorTag(userId))]),
    ];
  }

  /**
   * Closes the streams of `userId` (and the hijack streams it opened) whose token no longer
   * holds (sign-out, password, role), with the code of a revoked token.
   */
  async revoke(userId: string, stillValid: string[]): Promise<number> {
    let closed = 0;
    for (const ws of this.socketsOf(userId)) {
      const att = ws.deserializeAttachment() as Attachment;
      if (att.kind === "events" && !stillValid.includes(att.tokenId)) {
        ws.close(4001, "The token behind this stream was revoked.");
        closed++;
      }
    }
    return closed;
  }

  /** Token ids of `userId`'s open streams (the Worker checks which still hold). */
  async tokensOf(userId: string): Promise<string[]> {
    return [
      ...new Set(
        this.socketsOf(userId)
          .map((ws) => ws.deserializeAttachment() as Attachment)
          .flatMap((a) => (a.kind === "events" ? [a.tokenId] : [])),
      ),
    ];
  }

  async connections(): Promise<number> {
    return this.ctx.getWebSockets().length;
  }

  webSocketMessage(ws: WebSocket, message: string | ArrayBuffer) {
    // Clients need not speak; a `ping` is answered so they can check the connection. Frames a
    // client has no reason to send close the socket (domain/live.ts clientFrame).
    const verdict = clientFrame(message);
    if (verdict === "pong") ws.send("pong");
    else if (verdict) ws.close(verdict.code, verdict.reason);
  }

  webSocketClose(ws: WebSocket, code: number) {
    try {
      ws.close(code === 1005 ? 1000 : code, "closed");
    } catch {}
  }

  private async remember(accountId: string) {
    if (this.accountId === accountId) return;
    this.accountId = accountId;
    await this.ctx.storage.put("account", accountId);
  }

  private async newestId(accountId: string): Promise<string | null> {
    const row = await (await accountDatabase(this.env, accountId))
      .prepare(
        `SELECT ${uuidText("id")} AS id FROM events WHERE account_id = ${uuidBytes()} ORDER BY events.id DESC LIMIT 1`,
      )
      .bind(accountId)
      .first<{ id: string }>();
    return row?.id ?? null;
  }

  /**
   * Reads the account's events after the lowest point any of `sockets` needs (minus the
   * overlap) and sends each socket, in id order, those it has not had and may see.
   */
  private async sendNew(sockets: WebSocket[]): Promise<number> {
    const accountId = await this.account();
    if (!accountId) return 0;
    const hwm = await this.ctx.storage.get<string>("hwm");
    const marks = sockets.map((ws) => {
      const a = ws.deserializeAttachment() as Attachment;
      return a.kind === "events" ? a.floor : (hwm ?? idFloor(Date.now()));
    });
    const from = marks.reduce(earlier);
    // From the lowest floor: a socket's floor is at most the overlap behind what it has seen.
    const lower = from;
    let sent = 0;
    let cursor = lower;
    let newest = hwm ?? from;
    const db = await accountDatabase(this.env, accountId);
    // The account's hidden form fields, read once a pass and only when a worker's socket is there:
    // read before any socket is served, so serving a socket stays one synchronous step (two
    // passes never interleave on one socket's attachment).
    const workers = sockets.some((ws) => {
      const a = ws.deserializeAttachment() as Attachment;
      return a.kind === "events" && a.role === "worker";
    });
    const hidden: HiddenFields = workers ? await hiddenFormFields(db, accountId) : new Set();
    for (;;) {
      const { results: stored } = await db
        .prepare(
          eventPageSql(
            ["id", "type", "created_at"],
            `e.account_id = ${uuidBytes()} AND e.id > ${uuidBytes()}`,
            "ASC",
          ),
        )
        .bind(accountId, cursor, PAGE)
        .all<Omit<EventRow, "text"> & StoredPayload>();
      if (!stored.length) break;
      const results: EventRow[] = withTexts(stored);
      const pass: Pass = { decoded: new Map(), hidden };
      for (let i = 0; i < sockets.length; i++) {
        sent += this.deliver(sockets[i], results, pass);
        // A thousand sockets take a while: let other work of the object (and of the runtime
        // it shares a thread with) through between slices instead of holding it up to the end.
        if (i % FAN_OUT_SLICE === FAN_OUT_SLICE - 1) await scheduler.wait(0);
      }
      cursor = results[results.length - 1].id;
      newest = later(newest, cursor);
      if (results.length < PAGE) break;
    }
    await this.ctx.storage.put("hwm", newest);
    return sent;
  }

  /** A row's payload decoded and its message written once, on first need, for every socket. */
  private decode(r: EventRow, decoded: Map<string, Decoded>): Decoded {
    let d = decoded.get(r.id);
    if (!d) {
      const data = JSON.parse(r.text) as Record<string, unknown>;
      const message = JSON.stringify({
        id: r.id,
        type: r.type,
        created_at: new Date(r.created_at).toISOString(),
        data,
      });
      d = { id: r.id, type: r.type, created_at: r.created_at, data, message };
      decoded.set(r.id, d);
    }
    return d;
  }

  /**
   * The message of `d` for a worker: rendered as the API would answer that worker (domain/live.ts),
   * once per worker and event however many sockets the worker has; null when it may not see it.
   */
  private forWorker(d: Decoded, userId: string, pass: Pass): string | null {
    d.forWorker ??= new Map();
    let m = d.forWorker.get(userId);
    if (m === undefined) {
      const shown = workerView({ userId, role: "worker" }, d.type, d.data, pass.hidden);
      m =
        shown === null
          ? null
          : JSON.stringify({
              id: d.id,
              type: shown.type,
              created_at: new Date(d.created_at).toISOString(),
              data: shown.data,
            });
      d.forWorker.set(userId, m);
    }
    return m;
  }

  private deliver(ws: WebSocket, rows: EventRow[], pass: Pass): number {
    const { decoded } = pass;
    const att = ws.deserializeAttachment() as Attachment;
    const recent = this.recent.get(ws) ?? new Map<string, number>();
    this.recent.set(ws, recent);
    const now = Date.now();
    for (const [id, at] of recent) if (now - at > 2 * OVERLAP_MS) recent.delete(id);
    let n = 0;
    if (att.kind === "tracker") {
      const mine = rows.some(
        (r) =>
          !recent.has(r.id) &&
          taskIdsOf(r.type, this.decode(r, decoded).data).some((t) => att.taskIds.includes(t)),
      );
      for (const r of rows) recent.set(r.id, now);
      if (mine) {
        ws.send(JSON.stringify({ type: "changed" }));
        n++;
      }
      return n;
    }
    // After a quiet spell (the object may have hibernated and forgotten `recent`), what was
    // processed before it is settled: never sent twice.
    let floor = recent.size === 0 && now - att.at > OVERLAP_MS ? later(att.last, att.floor) : att.floor;
    let last = att.last;
    for (const r of rows) {
      if (r.id <= floor || recent.has(r.id)) continue;
      recent.set(r.id, now);
      last = later(last, r.id);
      if (att.types && !att.types.includes(r.type)) continue;
      const d = this.decode(r, decoded);
      const message = att.role === "worker" ? this.forWorker(d, att.userId, pass) : d.message;
      if (message === null) continue;
      ws.send(message);
      n++;
    }
    // Ids older than the overlap are settled (a later commit with such an id is not waited for,
    // as `/events/` does not wait past its settle delay).
    const settled = idFloor(now - OVERLAP_MS);
    floor = later(floor, earlier(settled, last));
    ws.serializeAttachment({ ...att, floor, last, at: now });
    return n;
  }
}
