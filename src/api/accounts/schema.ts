import { z } from "@hono/zod-openapi";
import { isTimeZone } from "../../domain/time-zones";
import { badPlaceholders, PUBLIC_TASK_FIELDS } from "../../domain/tracker";
import { dateTime, emailAddress, placeholderPattern } from "../../http/openapi";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { ACCOUNT_VERSION_RE } from "../../http/versions";
import { CUSTOM_ISSUE } from "../../schemas/tasks";
import { TimeZoneSchema } from "../../schemas/time-zones";
import type { AccountRow } from "../../services/accounts";
import { LOCALES, MAP_PROVIDERS } from "../../services/accounts/settings";

const clock = (what: string) =>
  z
    .string()
    .regex(/^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/, "Time has wrong format. Use HH:MM:SS.")
    .openapi({ description: `${what}, \`HH:MM:SS\` in the account's time zone.` });

/** Account configuration (contract §11): readable by every member, writable by admins. */
const settings = {
  timezone: z
    .string()
    .openapi({ description: "IANA time zone: optimization windows, exports, recurrences." }),
  feature_signer_name: z.boolean().openapi({
    description: "Signatures must carry `signer_name` (one of the task's `signers` when it has any).",
  }),
  map_provider: z.enum(MAP_PROVIDERS).openapi({ description: "What public pages link to." }),
  google_maps_region: z
    .string()
    .nullable()
    .openapi({ description: "Two-letter region for Google Maps links." }),
  optimize_earliest_start: clock("A worker's default shift start for route optimization"),
  optimize_latest_end: clock("A worker's default shift end for route optimization"),
  optimize_visit_duration_margin: z
    .string()
    .openapi({ description: "Added to every task's `duration` when optimizing, `HH:MM:SS`." }),
  pod_show_images: z.boolean(),
  pod_show_signatures: z.boolean(),
  pod_show_task_events: z.boolean(),
  pod_show_task_event_creators: z.boolean(),
  pod_show_reference: z.boolean(),
  pod_show_description: z.boolean(),
  tracker_task_popup_template: z
    .string()
    .openapi({ description: "Default popup template of public trackers (`{{field}}` placeholders)." }),
  data_retention_days: z.number().int().min(1).max(36_500).nullable().openapi({
    description:
      "Days a finished task (completed, failed, cancelled: counted from its last change) stays before the cron archives it to R2 (`GET /archives/`) and removes it, with its commands, documents and signatures (their files too), form responses and notification records; an order goes with its last task. Null (the default): kept.",
  }),
  position_retention_days: z.number().int().min(1).max(90).openapi({
    description:
      "Days workers' positions are kept (contract §28; default 7, at most 90), then deleted by the cron, six hours at a time: personal data, deleted and never archived.",
  }),
  auto_assign: z.enum(["off", "insert"]).openapi({
    description:
      "Contract §29. `insert`: a task that becomes unassigned with a location and a window or scheduled time on today (the account's time zone) is assigned within 5 s to the on-duty worker's route where it adds the least travel time while every task there still fits, by a system `assign` command (`notes` `auto_assign`); when nothing fits, an event `task.auto_assign_failed`. `off` (the default): never.",
  }),
};

export const AccountSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    name: z.string(),
    api_version: z
      .string()
      .openapi({ description: "Version used when a request declares none (contract §1)." }),
    feature_allow_worker_reordering: z.boolean(),
    transit_active_limit: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Tasks a worker may hold in transit/active together; null = no limit." }),
    failed_reasons: z.array(z.string()),
    review_emails_to_assignee: z.boolean(),
    language: z.enum(LOCALES).openapi({ description: "Fallback language of public pages and messages." }),
    ...settings,
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("Account");

export const SignUpSchema = z
  .object({
    name: z.string().min(1).max(200),
    email: emailAddress(),
    password: z.string().min(8).max(256),
  })
  .openapi("AccountCreate");

export const AccountPatchSchema = z
  .object({
    name: z.string().min(1).max(200),
    api_version: z
      .string()
      .regex(ACCOUNT_VERSION_RE, "Unknown version.")
      .openapi({ description: "A version of the history (docs/api.md, API versions)." }),
    feature_allow_worker_reordering: z.boolean(),
    transit_active_limit: z.number().int().min(1).nullable(),
    failed_reasons: z.array(z.string().min(1).max(200)).max(100),
    review_emails_to_assignee: z.boolean(),
    language: z.enum(LOCALES),
    ...settings,
    timezone: TimeZoneSchema.refine(isTimeZone, "Unknown time zone.").openapi({
      description: "The account's local time: optimization windows, exports, recurrences.",
    }),
    google_maps_region: z
      .string()
      .regex(/^[A-Za-z]{2}$/, "Use a two-letter region code.")
      .transform((v) => v.toLowerCase())
      .nullable(),
    optimize_visit_duration_margin: z
      .string()
      .regex(/^\d{1,4}:[0-5]\d:[0-5]\d$/, "Duration has wrong format. Use HH:MM:SS."),
    tracker_task_popup_template: z
      .string()
      .max(10_000)
      // One message per unknown placeholder, naming it (contract §17), as trackers' do.
      .superRefine((t, ctx) => {
        for (const f of badPlaceholders(t, PUBLIC_TASK_FIELDS))
          ctx.addIssue({
            code: CUSTOM_ISSUE,
            message: `Unknown placeholder "{{${f}}}": use one of ${PUBLIC_TASK_FIELDS.join(", ")}.`,
          });
      })
      .openapi({
        description: `Default popup template of public trackers: \`{{field}}\` placeholders of ${PUBLIC_TASK_FIELDS.join(", ")}.`,
        pattern: placeholderPattern(PUBLIC_TASK_FIELDS),
      }),
  })
  .partial()
  .refine(
    (v) =>
      v.optimize_earliest_start === undefined ||
      v.optimize_latest_end === undefined ||
      v.optimize_earliest_start < v.optimize_latest_end,
    { message: "The shift must end after it starts.", path: ["optimize_latest_end"] },
  )
  .openapi("AccountPatch");

export function serializeAccount(r: RenderCtx, a: AccountRow) {
  return {
    id: a.id,
    url: link(r, "accounts", a.id),
    name: a.name,
    api_version: a.api_version,
    feature_allow_worker_reordering: Boolean(a.feature_allow_worker_reordering),
    transit_active_limit: a.transit_active_limit,
    failed_reasons: JSON.parse(a.failed_reasons || "[]") as string[],
    review_emails_to_assignee: Boolean(a.review_emails_to_assignee),
    language: a.language as (typeof LOCALES)[number],
    timezone: a.timezone,
    feature_signer_name: Boolean(a.feature_signer_name),
    map_provider: a.map_provider as (typeof MAP_PROVIDERS)[number],
    google_maps_region: a.google_maps_region,
    optimize_earliest_start: a.optimize_earliest_start,
    optimize_latest_end: a.optimize_latest_end,
    optimize_visit_duration_margin: a.optimize_visit_duration_margin,
    pod_show_images: Boolean(a.pod_show_images),
    pod_show_signatures: Boolean(a.pod_show_signatures),
    pod_show_task_events: Boolean(a.pod_show_task_events),
    pod_show_task_event_creators: Boolean(a.pod_show_task_event_creators),
    pod_show_reference: Boolean(a.pod_show_reference),
    pod_show_description: Boolean(a.pod_show_description),
    tracker_task_popup_template: a.tracker_task_popup_template,
    data_retention_days: a.data_retention_days,
    position_retention_days: a.position_retention_days,
    auto_assign: a.auto_assign,
    created_at: ts(r, a.created_at),
    updated_at: ts(r, a.updated_at),
  };
}
