import { messageEnv, perDatabase } from "../../db/shards";
/**
 * Sending notifications (contract §18). Triggers on `tasks` plan one `notification_sends` row
 * per task, event, template and recipient in the statement that moves the task (migration
 * 0016), so "once" is a unique key, not a check made later. From there:
 *
 *   relay     pending rows get `enqueued_at` (the fence) and a queue message: right after an
 *             API write for accounts with templates, and from the cron every minute;
 *   consumer  takes a row only while it is pending with the message's fence, so a redelivered
 *             or superseded message finds nothing to do;
 *   sms       the row and a queued SMS are written in one guarded batch, and the SMS goes
 *             through fd-sms (claim before sending, contract §18), so it is sent once;
 *   email     the row is claimed (`sending`) before the provider is called; a failure puts it
 *             back with a later fence and a delayed message (back-off), and a claim that never
 *             finished (a crash mid-send) is closed as failed rather than risking a second copy.
 */
import { isLocale } from "../../domain/locales";
import { accountPrincipal } from "../../domain/principal";
import {
  PUBLIC_TASK_FIELDS,
  type PublicTaskField,
  placeholdersOf,
  renderTemplate,
} from "../../domain/tracker";
import { uuidv7 } from "../../lib/ids";
import type { NotificationMessage } from "../../queues/notifications/message";
import type { SmsMessage } from "../../queues/sms/message";
import { renderPodPdf } from "../../render/pod-pdf";
import { documentFonts } from "../documents/fonts";
import { emailSenderFromEnv } from "../messaging/email";
import { EMAIL_ADDRESS } from "../messaging/email/address";
import { POD_OPTIONS, type PodOptions, podData, podImageLoader } from "../pod";
import { E164, MAX_SMS_LENGTH, smsProviderName } from "../sms";
import type { TaskRow } from "../tasks/types";
import { createTracker, LIVE_TRACKER_OF_TASK, publicUrl, type TrackerRow } from "../trackers";
import { eta, publicField } from "../trackers/public";
import { type NotificationTemplateRow, TEMPLATE_PLACEHOLDERS } from "./templates";

export type SendRow = {
  id: string;
  account_id: string;
  task_id: string;
  event: string;
  template_id: string;
  channel: "sms" | "email";
  recipient: string;
  state: "pending" | "sending" | "sent" | "failed";
  sms_id: string | null;
  error_message: string;
  attempts: number;
  enqueued_at: number | null;
  sent_at: number | null;
  created_at: number;
  updated_at: number;
};

/** A queued message not taken within this long is presumed lost and queued again. */
export const STALE_ENQUEUE_MS = 2 * 60_000;
/** A claim older than this never finished (the consumer died mid-send). */
const STALE_CLAIM_MS = 5 * 60_000;
/** Attempts of an e-mail before it is given up (back-off 30 s, 1 min, ... up to 1 h). */
export const MAX_EMAIL_ATTEMPTS = 8;
const backoffSeconds = (attempts: number) => Math.min(3600, 30 * 2 ** Math.max(0, attempts - 1));

/**
 * Queues pending sends not yet queued (or queued so long ago that the message must be lost):
 * each row gets a fresh fence in the UPDATE that selects it, so two relays never queue a row
 * twice, and a late old message no longer matches.
 */
export const relayNotifications = perDatabase(async function relayNotifications(
  env: Env,
  baseUrl: string,
  opts: { accountId?: string; limit?: number } = {},
): Promise<number> {
  const now = Date.now();
  const { results } = await env.DB.prepare(
    `UPDATE notification_sends SET enqueued_at = ?, updated_at = ?
     WHERE id IN (SELECT id FROM notification_sends WHERE state = 'pending' AND (enqueued_at IS NULL OR enqueued_at < ?)
                  AND (? IS NULL OR account_id = ?) LIMIT ?)
     RETURNING id`,
  )
    .bind(now, now, now - STALE_ENQUEUE_MS, opts.accountId ?? null, opts.accountId ?? null, opts.limit ?? 100)
    .all<{ id: string }>();
  for (let i = 0; i < results.length; i += 100) {
    await env.NOTIFICATIONS_QUEUE.sendBatch(
      results.slice(i, i + 100).map((r) => ({
        body: { sendId: r.id, fence: now, baseUrl } satisfies NotificationMessage,
      })),
    );
  }
  return results.length;
});

/** The cron's part (every minute): queue what is pending, close claims that never finished. */
export const sweepNotifications = perDatabase(async function sweepNotifications(env: Env) {
  const now = Date.now();
  await env.DB.prepare(
    "UPDATE notification_sends SET state = 'failed', error_message = 'Sending was interrupted; the outcome is unknown, so it was not sent again.', updated_at = ? WHERE state = 'sending' AND updated_at < ?",
  )
    .bind(now, now - STALE_CLAIM_MS)
    .run();
  let queued = 0;
  for (let round = 0; round < 10; round++) {
    const n = await relayNotifications(env, env.PUBLIC_BASE_URL ?? "", { limit: 500 });
    queued += n;
    if (n < 500) break;
  }
  return queued;
});

/**
 * Whether an account has active templates, remembered per isolate for a few seconds (as
 * accountHasWebhooks does): the relay after a write costs a D1 write, pointless without them.
 */
const TTL_MS = 5_000;
const seen = new Map<string, { has: boolean; at: number }>();
export async function accountHasTemplates(env: Env, accountId: string): Promise<boolean> {
  const now = Date.now();
  const known = seen.get(accountId);
  if (known && now - known.at < TTL_MS) return known.has;
  const row = await env.DB.prepare(
    "SELECT 1 AS x FROM notification_templates WHERE account_id = ? AND is_active = 1 LIMIT 1",
  )
    .bind(accountId)
    .first();
  if (seen.size > 10_000) seen.clear();
  seen.set(accountId, { has: !!row, at: now });
  return !!row;
}
export const forgetTemplatesOf = (accountId: string) => seen.delete(accountId);

type Context = { task: TaskRow; template: NotificationTemplateRow; timeZone: string };

/**
 * A live tracker showing the task (its own or its order's), or a new one with the default
 * fields: created only if none exists when the INSERT runs, so two messages rendered at once
 * share one tracker.
 */
async function trackerUrl(env: Env, c: Context, baseUrl: string): Promise<string> {
  const live = () =>
    env.DB.prepare(LIVE_TRACKER_OF_TASK)
      .bind(c.task.account_id, Date.now(), c.task.order_id, c.task.id)
      .first<Pick<TrackerRow, "token">>();
  const existing = await live();
  if (existing) return publicUrl(baseUrl, existing.token);
  const created = await createTracker(
    env,
    accountPrincipal(c.task.account_id, c.template.created_by),
    { tasks: [c.task.id] },
    { unlessTaskTracked: { id: c.task.id, orderId: c.task.order_id } },
  );
  const token = created?.token ?? (await live())?.token;
  if (!token) throw new Error("No tracker for the task.");
  return publicUrl(baseUrl, token);
}

/**
 * The placeholders' values: the public task fields (§17) and `tracker_url`. Times read as the
 * recipient would say them: in the account's time zone, in the template's language.
 */
async function values(env: Env, c: Context, baseUrl: string): Promise<Record<string, unknown>> {
  const used = new Set([...placeholdersOf(c.template.subject), ...placeholdersOf(c.template.body)]);
  const db = env.DB;
  const [assignee, order] = await db.batch([
    db.prepare("SELECT name FROM users WHERE id = ?").bind(c.task.assignee_id ?? ""),
    db
      .prepare("SELECT reference FROM orders WHERE id = ? AND account_id = ?")
      .bind(c.task.order_id ?? "", c.task.account_id),
  ]);
  const e = used.has("eta") ? await eta(env, c.task, Date.now()) : null;
  const extra = {
    assigneeName: (assignee.results[0] as { name?: string } | undefined)?.name ?? null,
    reference: (order.results[0] as { reference?: string } | undefined)?.reference ?? "",
    eta: e && "eta" in e ? e.eta : null,
  };
  const when = new Intl.DateTimeFormat(c.template.language, {
    dateStyle: "medium",
    timeStyle: "short",
    timeZone: c.timeZone,
  });
  const out: Record<string, unknown> = {};
  for (const f of PUBLIC_TASK_FIELDS) {
    if (!used.has(f)) continue;
    const v = publicField(c.task, f as PublicTaskField, extra);
    out[f] =
      typeof v === "string" && ["complete_after", "complete_before", "scheduled_time", "eta"].includes(f)
        ? when.format(new Date(v))
        : v;
  }
  if (used.has("tracker_url")) out.tracker_url = await trackerUrl(env, c, baseUrl);
  return out;
}

async function load(env: Env, row: SendRow): Promise<Context | string> {
  const db = env.DB;
  const [task, template, account] = await db.batch([
    db.prepare("SELECT * FROM tasks WHERE id = ? AND account_id = ?").bind(row.task_id, row.account_id),
    db
      .prepare("SELECT * FROM notification_templates WHERE id = ? AND account_id = ?")
      .bind(row.template_id, row.account_id),
    db.prepare("SELECT timezone FROM accounts WHERE id = ?").bind(row.account_id),
  ]);
  if (!task.results[0]) return "The task was deleted.";
  if (!template.results[0]) return "The template was deleted.";
  const t = template.results[0] as NotificationTemplateRow;
  if (!t.is_active) return "The template was deactivated.";
  return {
    task: task.results[0] as TaskRow,
    template: t,
    timeZone: (account.results[0] as { timezone?: string } | undefined)?.timezone || "UTC",
  };
}

const fail = (env: Env, id: string, message: string, fromState: string) =>
  env.DB.prepare(
    "UPDATE notification_sends SET state = 'failed', error_message = ?, updated_at = ? WHERE id = ? AND state = ?",
  )
    .bind(message.slice(0, 500), Date.now(), id, fromState)
    .run();

/** A phone as written by people (`+358 40 123-4567`, `(+372) 555.0000`) reduced to E.164's digits. */
const phoneOf = (raw: string) => raw.replace(/[\s().-]/g, "");

/** Why a contact's phone or e-mail cannot be sent to, or null. */
export function recipientProblem(channel: string, recipient: string): string | null {
  if (channel === "sms")
    return E164.test(phoneOf(recipient))
      ? null
      : "Not sent: the contact's phone is not a number in E.164 format (e.g. +358401234567).";
  return EMAIL_ADDRESS.test(recipient) ? null : "Not sent: the contact's e-mail is not an e-mail address.";
}

/** The fd-notifications job for one message. */
export async function deliverNotification(env: Env, m: NotificationMessage): Promise<void> {
  env = await messageEnv(env, (db) =>
    db.prepare("SELECT 1 FROM notification_sends WHERE id = ?").bind(m.sendId).first(),
  );
  const row = await env.DB.prepare("SELECT * FROM notification_sends WHERE id = ?")
    .bind(m.sendId)
    .first<SendRow>();
  if (!row) return;
  if (row.state === "sent" && row.sms_id) {
    // A redelivery after the SMS was written: make sure its own message exists (fd-sms claims
    // before sending, so a second message for the same SMS never sends it twice).
    const sms = await env.DB.prepare("SELECT state FROM sms WHERE id = ?")
      .bind(row.sms_id)
      .first<{ state: string }>();
    if (sms?.state === "queued")
      await env.SMS_QUEUE.send({
        accountId: row.account_id,
        smsId: row.sms_id,
        baseUrl: m.baseUrl,
      } satisfies SmsMessage);
    return;
  }
  if (row.state !== "pending" || row.enqueued_at !== m.fence) return;
  // A contact's phone or e-mail is free text: a recipient no provider could take is skipped,
  // with the reason on the send, instead of being handed to Twilio or put in a header.
  const refused = recipientProblem(row.channel, row.recipient);
  if (refused) return void (await fail(env, row.id, refused, "pending"));
  const c = await load(env, row);
  if (typeof c === "string") return void (await fail(env, row.id, c, "pending"));
  const vals = await values(env, c, m.baseUrl);
  const allowed = TEMPLATE_PLACEHOLDERS;
  const text = renderTemplate(c.template.body, vals, allowed, { html: false });
  if (row.channel === "sms")
    return sendSms(env, { ...row, recipient: phoneOf(row.recipient) }, m, text.slice(0, MAX_SMS_LENGTH));
  const subject = renderTemplate(c.template.subject, vals, allowed, { html: false }).replace(/[\r\n]+/g, " ");
  return sendEmail(env, row, m, c, subject, text);
}

async function sendSms(env: Env, row: SendRow, m: NotificationMessage, text: string) {
  const now = Date.now();
  const smsId = uuidv7(now);
  const guard =
    "EXISTS (SELECT 1 FROM notification_sends WHERE id = ? AND state = 'pending' AND enqueued_at = ?)";
  const [inserted] = await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO sms (id, account_id, to_number, message, task_id, state, provider, error_message, created_by, created_at, updated_at)
       SELECT ?, ?, ?, ?, ?, 'queued', ?, '', NULL, ?, ? WHERE ${guard}`,
    ).bind(
      smsId,
      row.account_id,
      row.recipient,
      text,
      row.task_id,
      smsProviderName(env),
      now,
      now,
      row.id,
      m.fence,
    ),
    env.DB.prepare(
      "UPDATE notification_sends SET state = 'sent', sms_id = ?, sent_at = ?, attempts = attempts + 1, updated_at = ? WHERE id = ? AND state = 'pending' AND enqueued_at = ?",
    ).bind(smsId, now, now, row.id, m.fence),
  ]);
  if (!inserted.meta.changes) return;
  await env.SMS_QUEUE.send({ accountId: row.account_id, smsId, baseUrl: m.baseUrl } satisfies SmsMessage);
}

async function sendEmail(
  env: Env,
  row: SendRow,
  m: NotificationMessage,
  c: Context,
  subject: string,
  text: string,
) {
  const claimed = await env.DB.prepare(
    "UPDATE notification_sends SET state = 'sending', attempts = attempts + 1, updated_at = ? WHERE id = ? AND state = 'pending' AND enqueued_at = ? RETURNING attempts",
  )
    .bind(Date.now(), row.id, m.fence)
    .first<{ attempts: number }>();
  if (!claimed) return;
  try {
    const attachments = [];
    if (row.event === "task_completed") {
      // The template's POD options where it sets them, the account's (read now) elsewhere.
      const overrides: Partial<PodOptions> = {};
      for (const o of POD_OPTIONS) if (c.template[o] !== null) overrides[o] = Boolean(c.template[o]);
      const principal = accountPrincipal(row.account_id, c.template.created_by);
      // In the template's language, as the message it is attached to.
      const data = await podData(env, principal, row.task_id, overrides, m.baseUrl, {
        fallback: isLocale(c.template.language) ? c.template.language : undefined,
      });
      const pdf = await renderPodPdf(data, podImageLoader(env.FILES), await documentFonts(env));
      attachments.push({ filename: `pod-${row.task_id}.pdf`, contentType: "application/pdf", content: pdf });
    }
    await emailSenderFromEnv(env).send({
      to: row.recipient,
      subject,
      text,
      kind: "notification",
      accountId: row.account_id,
      attachments,
    });
    await env.DB.prepare(
      "UPDATE notification_sends SET state = 'sent', sent_at = ?, error_message = '', updated_at = ? WHERE id = ? AND state = 'sending'",
    )
      .bind(Date.now(), Date.now(), row.id)
      .run();
  } catch (err) {
    const message = String((err as Error)?.message ?? err).slice(0, 500);
    if (claimed.attempts >= MAX_EMAIL_ATTEMPTS)
      return void (await fail(
        env,
        row.id,
        `Gave up after ${claimed.attempts} attempts: ${message}`,
        "sending",
      ));
    // Back to pending with a later fence, and a delayed message carrying it (the back-off).
    const delay = backoffSeconds(claimed.attempts);
    const fence = Date.now() + delay * 1000;
    const back = await env.DB.prepare(
      "UPDATE notification_sends SET state = 'pending', enqueued_at = ?, error_message = ?, updated_at = ? WHERE id = ? AND state = 'sending'",
    )
      .bind(fence, message, Date.now(), row.id)
      .run();
    if (back.meta.changes)
      await env.NOTIFICATIONS_QUEUE.send(
        { sendId: row.id, fence, baseUrl: m.baseUrl } satisfies NotificationMessage,
        {
          delaySeconds: delay,
        },
      );
  }
}
