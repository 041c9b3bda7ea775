/**
 * Notification templates (contract §18): the message a task's contact gets, by SMS or e-mail,
 * when the task is assigned, in transit, completed or failed. Placeholders are those of the
 * public tracker (§17: the public task fields) plus `{{tracker_url}}`; an unknown one is
 * refused when the template is saved, so a message never shows a raw `{{...}}`.
 */

import { accountRow } from "../../db/account-rows";
import { LOCALES } from "../../domain/locales";
import { badPlaceholders, PUBLIC_TASK_FIELDS } from "../../domain/tracker";
import { type FieldErrors, ValidationError } from "../../http/errors";
import { paginateByCreation } from "../../http/pagination";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { uuidv7 } from "../../lib/ids";
import type { Principal } from "../auth/principal";
import { POD_OPTIONS, type PodOption } from "../pod";
import { MAX_SMS_LENGTH } from "../sms";

export const NOTIFICATION_EVENTS = [
  "task_assigned",
  "task_transit",
  "task_completed",
  "task_failed",
] as const;
export const NOTIFICATION_CHANNELS = ["sms", "email"] as const;
/** What a template may name: the public task fields and the task's tracking link. */
export const TEMPLATE_PLACEHOLDERS: readonly string[] = [...PUBLIC_TASK_FIELDS, "tracker_url"];
export const MAX_SUBJECT = 255;
export const MAX_EMAIL_BODY = 20_000;

export type NotificationTemplateRow = {
  id: string;
  account_id: string;
  event: string;
  channel: string;
  language: string;
  subject: string;
  body: string;
  is_active: number;
  created_by: string | null;
  created_at: number;
  updated_at: number;
} & Record<PodOption, number | null>;

export type NotificationTemplateWrite = {
  event?: string;
  channel?: string;
  language?: string;
  subject?: string;
  body?: string;
  is_active?: boolean;
} & Partial<Record<PodOption, boolean | null>>;

const bool = (v: number | null) => (v === null ? null : Boolean(v));

export function serializeNotificationTemplate(r: RenderCtx, t: NotificationTemplateRow) {
  return {
    id: t.id,
    url: link(r, "notification_templates", t.id),
    account: link(r, "accounts", t.account_id),
    event: t.event,
    channel: t.channel,
    language: t.language,
    subject: t.subject,
    body: t.body,
    is_active: Boolean(t.is_active),
    ...(Object.fromEntries(POD_OPTIONS.map((o) => [o, bool(t[o])])) as Record<PodOption, boolean | null>),
    created_by: link(r, "users", t.created_by),
    created_at: ts(r, t.created_at),
    updated_at: ts(r, t.updated_at),
  };
}

export async function getNotificationTemplate(db: D1Database, p: Principal, id: string) {
  return accountRow<NotificationTemplateRow>(db, "notification_templates", p.accountId, id);
}

export function listNotificationTemplates(
  db: D1Database,
  p: Principal,
  q: { cursor?: string; page_size?: number; event?: string; channel?: string; is_active?: "true" | "false" },
  url: string,
) {
  const where = ["account_id = ?"];
  const params: unknown[] = [p.accountId];
  if (q.event !== undefined) where.push("event = ?") && params.push(q.event);
  if (q.channel !== undefined) where.push("channel = ?") && params.push(q.channel);
  if (q.is_active !== undefined) where.push("is_active = ?") && params.push(q.is_active === "true" ? 1 : 0);
  return paginateByCreation<NotificationTemplateRow>({
    db,
    select: "SELECT * FROM notification_templates",
    where,
    params,
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}

/** The template a write leaves, checked as a whole (a PATCH may break what it does not send). */
function check(
  t: Omit<NotificationTemplateRow, "id" | "account_id" | "created_by" | "created_at" | "updated_at">,
) {
  const errors: FieldErrors = {};
  if (!(NOTIFICATION_EVENTS as readonly string[]).includes(t.event))
    errors.event = [`"${t.event}" is not a valid choice. Choices: ${NOTIFICATION_EVENTS.join(", ")}.`];
  if (!(NOTIFICATION_CHANNELS as readonly string[]).includes(t.channel))
    errors.channel = [`"${t.channel}" is not a valid choice. Choices: ${NOTIFICATION_CHANNELS.join(", ")}.`];
  if (!(LOCALES as readonly string[]).includes(t.language))
    errors.language = [`"${t.language}" is not a valid choice. Choices: ${LOCALES.join(", ")}.`];
  if (!t.body.trim()) errors.body = ["This field may not be blank."];
  else if (t.channel === "sms" && t.body.length > MAX_SMS_LENGTH)
    errors.body = [`Ensure this field has no more than ${MAX_SMS_LENGTH} characters (one SMS).`];
  else if (t.body.length > MAX_EMAIL_BODY)
    errors.body = [`Ensure this field has no more than ${MAX_EMAIL_BODY} characters.`];
  if (t.channel === "email" && !t.subject.trim())
    errors.subject = ["This field is required for e-mail templates."];
  if (t.subject.length > MAX_SUBJECT)
    errors.subject = [`Ensure this field has no more than ${MAX_SUBJECT} characters.`];
  for (const f of ["subject", "body"] as const) {
    const bad = badPlaceholders(t[f], TEMPLATE_PLACEHOLDERS);
    if (bad.length)
      errors[f] = bad.map(
        (x) =>
          `Unknown placeholder "{{${x}}}": use one of ${TEMPLATE_PLACEHOLDERS.map((n) => `{{${n}}}`).join(", ")}.`,
      );
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
}

const podColumns = (input: NotificationTemplateWrite, current: NotificationTemplateRow | null) =>
  Object.fromEntries(
    POD_OPTIONS.map((o) => {
      const v = input[o];
      return [o, v === undefined ? (current?.[o] ?? null) : v === null ? null : v ? 1 : 0];
    }),
  ) as Record<PodOption, number | null>;

export async function createNotificationTemplate(
  db: D1Database,
  p: Principal,
  input: NotificationTemplateWrite,
) {
  const missing: FieldErrors = {};
  for (const f of ["event", "channel", "body"] as const)
    if (input[f] === undefined) missing[f] = ["This field is required."];
  if (Object.keys(missing).length) throw new ValidationError(missing);
  const account = await db
    .prepare("SELECT language FROM accounts WHERE id = ?")
    .bind(p.accountId)
    .first<{ language: string }>();
  const now = Date.now();
  const row: NotificationTemplateRow = {
    id: uuidv7(now),
    account_id: p.accountId,
    event: input.event!,
    channel: input.channel!,
    language: input.language ?? account?.language ?? "en",
    subject: input.subject ?? "",
    body: input.body!,
    is_active: input.is_active === false ? 0 : 1,
    ...podColumns(input, null),
    created_by: p.userId,
    created_at: now,
    updated_at: now,
  };
  check(row);
  const keys = Object.keys(row) as (keyof NotificationTemplateRow)[];
  await db
    .prepare(
      `INSERT INTO notification_templates (${keys.join(", ")}) VALUES (${keys.map(() => "?").join(", ")})`,
    )
    .bind(...keys.map((k) => row[k]))
    .run();
  return row;
}

export async function updateNotificationTemplate(
  db: D1Database,
  p: Principal,
  id: string,
  input: NotificationTemplateWrite,
  method: "patch" | "put",
) {
  const current = await getNotificationTemplate(db, p, id);
  if (method === "put") {
    const missing: FieldErrors = {};
    for (const f of ["event", "channel", "body"] as const)
      if (input[f] === undefined) missing[f] = ["This field is required."];
    if (Object.keys(missing).length) throw new ValidationError(missing);
  }
  const next: NotificationTemplateRow = {
    ...current,
    event: input.event ?? current.event,
    channel: input.channel ?? current.channel,
    language: input.language ?? current.language,
    subject: input.subject ?? (method === "put" ? "" : current.subject),
    body: input.body ?? current.body,
    is_active:
      input.is_active === undefined ? (method === "put" ? 1 : current.is_active) : input.is_active ? 1 : 0,
    ...podColumns(input, method === "put" ? null : current),
    updated_at: Date.now(),
  };
  check(next);
  const cols = [
    "event",
    "channel",
    "language",
    "subject",
    "body",
    "is_active",
    ...POD_OPTIONS,
    "updated_at",
  ] as const;
  await db
    .prepare(
      `UPDATE notification_templates SET ${cols.map((c) => `${c} = ?`).join(", ")} WHERE id = ? AND account_id = ?`,
    )
    .bind(...cols.map((c) => next[c]), id, p.accountId)
    .run();
  return next;
}

/** Deleting a template stops its messages not yet sent; what was sent stays in /sms/ and the outbox. */
export async function deleteNotificationTemplate(db: D1Database, p: Principal, id: string) {
  await getNotificationTemplate(db, p, id);
  await db.batch([
    db.prepare("DELETE FROM notification_templates WHERE id = ? AND account_id = ?").bind(id, p.accountId),
    db
      .prepare(
        "UPDATE notification_sends SET state = 'failed', error_message = 'The template was deleted.', updated_at = ? WHERE template_id = ? AND account_id = ? AND state = 'pending'",
      )
      .bind(Date.now(), id, p.accountId),
  ]);
}
