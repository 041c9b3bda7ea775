import { z } from "@hono/zod-openapi";
import { dateTime } from "../../http/openapi";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { ALL_EXACT_VERSIONS } from "../../http/versions";
import type { AccountRow } from "../../services/accounts";

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
    language: z.string(),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("Account");

export const SignUpSchema = z
  .object({
    name: z.string().min(1).max(200),
    email: z.string().email(),
    password: z.string().min(8).max(256),
  })
  .openapi("SignUp");

export const AccountPatchSchema = z
  .object({
    name: z.string().min(1).max(200),
    api_version: z
      .string()
      .refine((v) => ALL_EXACT_VERSIONS.includes(v) || /^2\.[2-5]\.\d+$/.test(v), "Unknown version."),
    feature_allow_worker_reordering: z.boolean(),
    transit_active_limit: z.number().int().min(1).nullable(),
    failed_reasons: z.array(z.string().min(1).max(200)).max(100),
    review_emails_to_assignee: z.boolean(),
    language: z.string().min(2).max(10),
  })
  .partial()
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
    language: a.language,
    created_at: ts(r, a.created_at),
    updated_at: ts(r, a.updated_at),
  };
}
