import { accountEnv, everyDatabase } from "../../db/shards";
/**
 * SMS (contract §18): `POST /sms/` stores the message `queued` and hands it to fd-sms; the same
 * account, phone and message within SMS_DUPLICATE_SEND_WINDOW_SECONDS answer the existing SMS
 * (decided by the INSERT itself, so two racing requests cannot both send); `resend` always
 * makes a fresh one. The consumer claims a message (`queued` → `sending`) before calling the
 * provider, so a redelivered message is never sent twice: a claim older than the provider's
 * timeout with no answer recorded is marked `failed` (outcome unknown) rather than re-sent.
 */

import { accountRow, accountRowsNewestFirst } from "../../db/account-rows";
import { type FieldErrors, ValidationError } from "../../http/errors";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { parseHyperlink } from "../../http/urls";
import { uuidv7 } from "../../lib/ids";
import type { SmsMessage } from "../../queues/sms/message";
import type { Principal } from "../auth/principal";
import { type SmsSender, SmsUnavailableError, smsSenderFromEnv } from "../messaging/sms";

export const E164 = /^\+[1-9]\d{1,14}$/;
export const MAX_SMS_LENGTH = 1600;
/** A claim older than this (the provider call times out after 15 s) will not be retried. */
const CLAIM_MS = 60_000;

export type SmsRow = {
  id: string;
  account_id: string;
  to_number: string;
  message: string;
  task_id: string | null;
  state: "queued" | "sending" | "sent" | "delivered" | "failed";
  provider: string;
  provider_message_id: string | null;
  error_message: string;
  sent_at: number | null;
  created_by: string | null;
  created_at: number;
  updated_at: number;
};

export function serializeSms(r: RenderCtx, s: SmsRow) {
  return {
    id: s.id,
    url: link(r, "sms", s.id),
    account: link(r, "accounts", s.account_id),
    to: s.to_number,
    message: s.message,
    task: link(r, "tasks", s.task_id),
    // `sending` is the consumer's claim; clients see the message as still queued.
    state: s.state === "sending" ? "queued" : s.state,
    provider: s.provider,
    provider_message_id: s.provider_message_id,
    error_message: s.error_message,
    sent_at: ts(r, s.sent_at),
    created_by: link(r, "users", s.created_by),
    created_at: ts(r, s.created_at),
    updated_at: ts(r, s.updated_at),
  };
}

export async function getSms(db: D1Database, p: Principal, id: string) {
  return accountRow<SmsRow>(db, "sms", p.accountId, id);
}

export function listSms(
  db: D1Database,
  p: Principal,
  q: { cursor?: string; page_size?: number },
  url: string,
) {
  return accountRowsNewestFirst<SmsRow>(db, "sms", p.accountId, q, url);
}

/** The provider an SMS is sent with (wrangler.jsonc `SMS_PROVIDER`), recorded on the row. */
export const smsProviderName = (env: Env) => (env.SMS_PROVIDER === "twilio" ? "twilio" : "local");

const windowMs = (env: Env) => {
  const n = Number(env.SMS_DUPLICATE_SEND_WINDOW_SECONDS);
  return (Number.isFinite(n) && n >= 0 ? n : 300) * 1000;
};

/** Creates and queues an SMS; `{created: false}` with the existing one inside the duplicate window. */
export async function createSms(
  env: Env,
  p: Principal,
  input: { to: string; message: string; task?: string | null },
  baseUrl: string,
  opts: { fresh?: boolean } = {},
) {
  const errors: FieldErrors = {};
  if (!E164.test(input.to)) errors.to = ["Enter a phone number in E.164 format, e.g. +358401234567."];
  if (!input.message.trim()) errors.message = ["This field may not be blank."];
  if (input.message.length > MAX_SMS_LENGTH)
    errors.message = [`Ensure this field has no more than ${MAX_SMS_LENGTH} characters.`];
  let taskId: string | null = null;
  if (input.task) {
    taskId = parseHyperlink(input.task, "tasks");
    const found = taskId
      ? await env.DB.prepare("SELECT id FROM tasks WHERE id = ? AND account_id = ?")
          .bind(taskId, p.accountId)
          .first()
      : null;
    if (!found)
      errors.task = [
        taskId ? "Invalid hyperlink - Object does not exist." : "Invalid hyperlink - No URL match.",
      ];
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const now = Date.now();
  const id = uuidv7(now);
  const provider = smsProviderName(env);
  const since = opts.fresh ? now + 1 : now - windowMs(env);
  const inserted = await env.DB.prepare(
    `INSERT INTO sms (id, account_id, to_number, message, task_id, state, provider, created_by, created_at, updated_at)
     SELECT ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?
     WHERE NOT EXISTS (SELECT 1 FROM sms WHERE account_id = ? AND to_number = ? AND message = ? AND created_at >= ?)
     RETURNING id`,
  )
    .bind(
      id,
      p.accountId,
      input.to,
      input.message,
      taskId,
      provider,
      p.userId,
      now,
      now,
      p.accountId,
      input.to,
      input.message,
      since,
    )
    .first<{ id: string }>();
  if (!inserted) {
    const existing = await env.DB.prepare(
      "SELECT * FROM sms WHERE account_id = ? AND to_number = ? AND message = ? AND created_at >= ? ORDER BY created_at DESC LIMIT 1",
    )
      .bind(p.accountId, input.to, input.message, since)
      .first<SmsRow>();
    return { row: existing!, created: false };
  }
  const message: SmsMessage = { accountId: p.accountId, smsId: id, baseUrl };
  await env.SMS_QUEUE.send(message);
  return { row: (await getSms(env.DB, p, id))!, created: true };
}

export async function resendSms(env: Env, p: Principal, id: string, baseUrl: string) {
  const row = await getSms(env.DB, p, id);
  return createSms(env, p, { to: row.to_number, message: row.message, task: row.task_id }, baseUrl, {
    fresh: true,
  });
}

/** The fd-sms job: claim, send once, record. A temporary provider failure returns "retry". */
export async function sendQueuedSms(env: Env, m: SmsMessage, sender?: SmsSender): Promise<"done" | "retry"> {
  env = await accountEnv(env, m.accountId);
  const now = Date.now();
  const claim = await env.DB.prepare(
    "UPDATE sms SET state = 'sending', updated_at = ? WHERE id = ? AND account_id = ? AND state = 'queued' RETURNING *",
  )
    .bind(now, m.smsId, m.accountId)
    .first<SmsRow>();
  if (!claim) {
    // Already sent, failed, or claimed by a delivery that may have reached the provider: a
    // stale claim is closed as failed (its outcome is unknown) instead of risking a second send.
    await env.DB.prepare(
      "UPDATE sms SET state = 'failed', error_message = 'Sending was interrupted; the outcome is unknown, so it was not sent again.', updated_at = ? WHERE id = ? AND state = 'sending' AND updated_at < ?",
    )
      .bind(now, m.smsId, now - CLAIM_MS)
      .run();
    return "done";
  }
  const provider = sender ?? smsSenderFromEnv(env);
  try {
    const { providerMessageId } = await provider.send({
      to: claim.to_number,
      body: claim.message,
      // The account rides in the callback's URL, which the provider signs: its receipt is then
      // recorded in the account's database alone (recordSmsStatus).
      statusCallback:
        provider.name === "twilio"
          ? `${m.baseUrl}/sms/status/?account=${encodeURIComponent(claim.account_id)}`
          : null,
    });
    await env.DB.prepare(
      "UPDATE sms SET state = 'sent', provider_message_id = ?, sent_at = ?, updated_at = ? WHERE id = ?",
    )
      .bind(providerMessageId, Date.now(), Date.now(), claim.id)
      .run();
    return "done";
  } catch (err) {
    const temporary = err instanceof SmsUnavailableError;
    // Nothing reached the provider: release the claim for the retry.
    await env.DB.prepare("UPDATE sms SET state = ?, error_message = ?, updated_at = ? WHERE id = ?")
      .bind(
        temporary ? "queued" : "failed",
        String((err as Error).message ?? err).slice(0, 500),
        Date.now(),
        claim.id,
      )
      .run();
    return temporary ? "retry" : "done";
  }
}

/** Twilio's status callback (its `MessageStatus`) moves a sent message to delivered or failed. */
export async function recordSmsStatus(
  env: Env,
  providerMessageId: string,
  status: string,
  errorCode: string | null,
  accountId: string | null = null,
) {
  const state =
    status === "delivered" ? "delivered" : status === "failed" || status === "undelivered" ? "failed" : null;
  if (!state) return;
  const now = Date.now();
  const record = (db: D1Database) =>
    db
      .prepare(
        "UPDATE sms SET state = ?, error_message = CASE WHEN ? IS NULL THEN error_message ELSE ? END, updated_at = ? WHERE provider_message_id = ? AND state IN ('sent', 'delivered')",
      )
      .bind(state, errorCode, errorCode ? `Provider error ${errorCode}` : null, now, providerMessageId)
      .run();
  // The callback's URL names the account (a message sent since it does): its database alone.
  // Otherwise the SMS is in whichever database holds its account (contract §24), and only
  // there does the UPDATE find it.
  if (accountId) {
    const updated = await record((await accountEnv(env, accountId)).DB).catch(() => null);
    if (updated?.meta.changes) return;
  }
  await Promise.all(everyDatabase(env).map(({ db }) => record(db)));
}
