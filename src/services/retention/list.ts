/**
 * `GET /archives/` (contract §23): the account's archive objects, newest first, each with a
 * short-lived signed link (s3/signed-links.ts); only finished ones (a part being written or
 * verified is not listed until its rows are gone from D1).
 */
import { fieldError } from "../../http/errors";
import { paginateByCreation } from "../../http/pagination";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { isDay } from "../../http/timezones";
import { signLink } from "../../s3/signed-links";
import type { Principal } from "../auth/principal";
import type { ArchiveRow } from "./archive";

export type ArchiveQuery = {
  kind?: string;
  date__gte?: string;
  date__lte?: string;
  cursor?: string;
  page_size?: number;
};

export function listArchives(db: D1Database, p: Principal, q: ArchiveQuery, url: string) {
  const where = ["account_id = ?", "state = 'done'"];
  const params: unknown[] = [p.accountId];
  if (q.kind) {
    where.push("kind = ?");
    params.push(q.kind);
  }
  for (const [key, op] of [
    ["date__gte", ">="],
    ["date__lte", "<="],
  ] as const) {
    const v = q[key];
    if (v === undefined) continue;
    // A day of the API's (1970–2099, one that exists), as every date it takes (http/timezones.ts).
    if (!isDay(v)) throw fieldError(key, "Date has wrong format. Use YYYY-MM-DD.");
    where.push(`day ${op} ?`);
    params.push(v);
  }
  return paginateByCreation<ArchiveRow>({
    db,
    select: "SELECT * FROM archives",
    where,
    params,
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
    desc: true,
  });
}

export async function serializeArchive(env: Env, r: RenderCtx, a: ArchiveRow) {
  return {
    id: a.id,
    kind: a.kind,
    date: a.day,
    part: a.part,
    rows: a.rows,
    bytes: a.bytes,
    sha256: a.sha256,
    url: (await signLink(env, r.baseUrl, a.key)).url,
    account: link(r, "accounts", a.account_id),
    created_at: ts(r, a.created_at),
  };
}
