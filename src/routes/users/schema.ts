import { z } from "@hono/zod-openapi";
import { ROLES } from "../../db/schema";
import { dateTime } from "../../http/openapi";
import { link, type RenderCtx, ts } from "../../http/serialize";
import type { AccountRoleRow, UserRow } from "../../services/accounts";

export const RoleEnum = z.enum(ROLES);

export const UserSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    email: z.string(),
    name: z.string(),
    is_active: z.boolean(),
    account: z.string().url().nullable().openapi({ description: "The user's default account." }),
    role: RoleEnum.nullable().openapi({ description: "Role in the caller's account." }),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("User");

export const UserCreateSchema = z
  .object({
    email: z.string().email(),
    name: z.string().max(200).optional(),
    password: z
      .string()
      .min(8)
      .max(256)
      .optional()
      .openapi({ description: "Without it the user cannot sign in until a password is set." }),
    role: RoleEnum,
  })
  .openapi("UserCreate");

export const UserPatchSchema = z
  .object({
    name: z.string().max(200),
    password: z.string().min(8).max(256),
    is_active: z.boolean().openapi({ description: "Admins only." }),
  })
  .partial()
  .openapi("UserPatch");

export function serializeUser(r: RenderCtx, u: UserRow) {
  return {
    id: u.id,
    url: link(r, "users", u.id),
    email: u.email,
    name: u.name,
    is_active: Boolean(u.is_active),
    account: link(r, "accounts", u.default_account_id),
    role: u.role ?? null,
    created_at: ts(r, u.created_at),
    updated_at: ts(r, u.updated_at),
  };
}

export const AccountRoleSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    account: z.string().url(),
    user: z.string().url(),
    role: RoleEnum,
    is_active: z.boolean(),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("AccountRole");

export const AccountRoleCreateSchema = z
  .object({
    user: z.string().optional().openapi({ description: "URL of an existing user." }),
    email: z.string().email().optional().openapi({ description: "Or the e-mail of an existing user." }),
    role: RoleEnum,
  })
  .refine((v) => v.user || v.email, { message: "Give `user` or `email`.", path: ["user"] })
  .openapi("AccountRoleCreate");

export const AccountRolePatchSchema = z
  .object({ role: RoleEnum, is_active: z.boolean() })
  .partial()
  .openapi("AccountRolePatch");

export function serializeRole(r: RenderCtx, a: AccountRoleRow) {
  return {
    id: a.id,
    url: link(r, "account_roles", a.id),
    account: link(r, "accounts", a.account_id),
    user: link(r, "users", a.user_id),
    role: a.role,
    is_active: Boolean(a.is_active),
    created_at: ts(r, a.created_at),
    updated_at: ts(r, a.updated_at),
  };
}
