import { uuidBytes } from "../../db/uuid-bytes";
import {
  decodeRecords,
  dequantize,
  type Quantized,
  quantize,
  SLICE_MS,
  sliceOf,
} from "../../domain/positions-codec";
import type { Fix } from "../../durable-objects/account-stream/positions";
import { ApiError, type FieldErrors, fieldError, permissionDenied, ValidationError } from "../../http/errors";
import { parseTimestamp } from "../../http/timezones";
import { base64url, fromBase64url, fromHex } from "../../lib/crypto";
import type { Principal } from "../auth/principal";
import { isDispatcher } from "../auth/principal";
import { streamOf } from "../live";

/**
 * Workers' positions (contract §28). A batch goes to the account's stream object, which keeps
 * each worker's latest position and writes trails to D1 in compact six-hour blocks
 * (durable-objects/account-stream/positions.ts, domain/positions-codec.ts); this module checks
 * what comes in and reads trails back.
 */

export type PositionInput = {
  location: { type: "Point"; coordinates: [number, number] };
  time: string;
  accuracy_m?: number | null;
  speed_mps?: number | null;
  heading_deg?: number | null;
};

/** A position further ahead of the server's clock than this is refused (contract §28). */
export const FUTURE_SLACK_MS = 5 * 60_000;
const DAY_MS = 86_400_000;

/** `POSITION_MIN_INTERVAL_SECONDS` (default 5): closer positions of a user are dropped. */
export function minIntervalMs(env: Env): number {
  const raw = (env as unknown as Record<string, string | undefined>).POSITION_MIN_INTERVAL_SECONDS;
  const n = Number(raw);
  return raw !== undefined && raw !== "" && Number.isFinite(n) && n >= 0 ? n * 1000 : 5000;
}

export { positionFreshMs } from "./fresh";

/** The latest positions of some users, from the account's stream object (exact, unlike the D1 copy). */
async function latestPositions(env: Env, accountId: string, users: string[]): Promise<Map<string, Fix>> {
  return users.length ? await streamOf(env, accountId).latestPositions(users) : new Map<string, Fix>();
}

/**
 * `POST /positions/`: the caller's own positions, one or a list. Stored only while the caller
 * is on duty (409 `off_duty`); a time more than 5 minutes ahead, or one that is not a date-time,
 * is a 400 naming the item (an array body gets an array of errors aligned with it, as a batch
 * of commands does). Nothing is stored when anything is refused.
 */
export async function recordPositions(
  env: Env,
  p: Principal,
  body: PositionInput | PositionInput[],
  baseUrl: string,
  zone: string | null,
  now = Date.now(),
): Promise<{ stored: number; dropped: number }> {
  const list = Array.isArray(body) ? body : [body];
  const errors: FieldErrors[] = list.map(() => ({}));
  const items = list.map((it, i) => {
    const t = parseTimestamp(it.time, zone);
    if (t === null) errors[i].time = ["Datetime has wrong format. Use ISO 8601 with Z or an offset."];
    else if (t > now + FUTURE_SLACK_MS)
      errors[i].time = ["This time is more than 5 minutes ahead of the server's clock."];
    const [lon, lat] = it.location.coordinates;
    return quantize({
      time: t ?? 0,
      lon,
      lat,
      accuracy_m: it.accuracy_m ?? null,
      speed_mps: it.speed_mps ?? null,
      heading_deg: it.heading_deg ?? null,
    });
  });
  if (errors.some((e) => Object.keys(e).length))
    throw new ValidationError(Array.isArray(body) ? errors : errors[0]);
  if (!p.onDuty)
    throw new ApiError(409, "off_duty", "You are off duty: positions are stored only while on duty.");
  const retention = (p.account.positionRetentionDays ?? 7) * DAY_MS;
  return streamOf(env, p.accountId).recordPositions({
    accountId: p.accountId,
    userId: p.userId,
    items,
    minGapMs: minIntervalMs(env),
    oldestMs: now - retention,
    baseUrl,
  });
}

/**
 * Users' latest positions as `GET /users/` shows them (contract §28): to the account's admins,
 * managers and integration users, and to each user its own; nothing for other viewers.
 */
export async function positionsFor(env: Env, p: Principal, userIds: string[]): Promise<Map<string, Fix>> {
  const allowed = isDispatcher(p) ? userIds : userIds.filter((u) => u === p.userId);
  return latestPositions(env, p.accountId, allowed);
}

export type TrailQuery = { user?: string; from?: string; to?: string; cursor?: string; page_size?: number };
export type TrailItem = { userId: string } & ReturnType<typeof dequantize>;

/** Slices read per D1 statement while filling a page (a day). */
const SLICES_PER_READ = 4;

/**
 * `GET /positions/?user=&from=&to=`: a user's trail in time order, a page at a time (contract
 * §4: a cursor that holds the last time seen). Admins, managers and integrations read anyone's
 * of the account; any other caller only its own (403 otherwise). `user` defaults to the caller.
 */
export async function listTrail(
  env: Env,
  p: Principal,
  q: { userId: string; from: number; to: number; cursor: number | null; backwards: boolean; size: number },
): Promise<{ items: TrailItem[]; more: boolean }> {
  if (!isDispatcher(p) && q.userId !== p.userId)
    throw permissionDenied("Workers may read their own positions only.");
  const from = q.backwards ? q.from : Math.max(q.from, (q.cursor ?? -Infinity) + 1);
  const to = q.backwards ? Math.min(q.to, (q.cursor ?? Infinity) - 1) : q.to;
  const out: Quantized[] = [];
  if (from <= to) {
    // What waits in the stream object is newer than anything in D1 for this user.
    const pending = await streamOf(env, p.accountId).pendingPositions(q.userId, from, to);
    const want = q.size + 1;
    const db = env.DB;
    let lo = sliceOf(from);
    let hi = sliceOf(to);
    const read = async (a: number, b: number, desc: boolean) => {
      const { results } = await db
        .prepare(
          `SELECT slice, hex(data) AS data FROM position_slices WHERE account_id = ${uuidBytes()} AND user_id = ${uuidBytes()}
           AND slice BETWEEN ? AND ? ORDER BY slice ${desc ? "DESC" : "ASC"} LIMIT ${SLICES_PER_READ}`,
        )
        .bind(p.accountId, q.userId, a, b)
        .all<{ slice: number; data: string }>();
      return results;
    };
    const inRange = (r: Quantized) => r.t >= from && r.t <= to;
    if (!q.backwards) {
      while (lo <= hi && out.length < want) {
        const rows = await read(lo, hi, false);
        for (const r of rows) out.push(...decodeRecords(r.slice, fromHex(r.data)).records.filter(inRange));
        if (rows.length < SLICES_PER_READ) break;
        lo = rows[rows.length - 1].slice + 1;
      }
      out.push(...pending);
      out.splice(want);
    } else {
      const tail = [...pending].reverse();
      out.push(...tail);
      while (lo <= hi && out.length < want) {
        const rows = await read(lo, hi, true);
        for (const r of rows)
          out.push(...decodeRecords(r.slice, fromHex(r.data)).records.filter(inRange).reverse());
        if (rows.length < SLICES_PER_READ) break;
        hi = rows[rows.length - 1].slice - 1;
      }
      out.splice(want);
      out.reverse();
    }
  }
  const more = out.length > q.size;
  const page = q.backwards ? out.slice(out.length > q.size ? 1 : 0) : out.slice(0, q.size);
  return { items: page.map((r) => ({ userId: q.userId, ...dequantize(r) })), more };
}

/** The trail's cursor (contract §4: opaque): the time of the item it follows, and the direction. */
export const trailCursor = (t: number, backwards: boolean) =>
  base64url(new TextEncoder().encode(JSON.stringify([t, backwards ? 1 : 0])));

export function readTrailCursor(s: string): { t: number; backwards: boolean } {
  try {
    const [t, b] = JSON.parse(new TextDecoder().decode(fromBase64url(s)));
    if (typeof t !== "number" || !Number.isFinite(t)) throw 0;
    return { t, backwards: b === 1 };
  } catch {
    throw fieldError("cursor", "Invalid cursor.");
  }
}

/** Deletes slices past each account's `position_retention_days` (contract §28): deleted, not archived. */
export async function sweepPositions(db: D1Database, now = Date.now()): Promise<number> {
  const res = await db
    .prepare(
      `DELETE FROM position_slices WHERE rowid IN (
         SELECT s.rowid FROM accounts a JOIN position_slices s ON s.account_id = ${uuidBytes("a.id")}
           AND s.slice < (? - a.position_retention_days * ${DAY_MS}) / ${SLICE_MS}
         LIMIT 5000)`,
    )
    .bind(now)
    .run();
  return res.meta.changes ?? 0;
}
