import { z } from "@hono/zod-openapi";
import { ROLES } from "../../db/schema";
import type { Fix } from "../../durable-objects/account-stream/positions";
import { dateTime, emailAddress, jsonSchemaRules } from "../../http/openapi";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { hyperlinkSchema } from "../../http/urls";
import { AddressInputSchema, AddressSchema, refineDepots } from "../../schemas/tasks";
import type { AccountRoleRow, UserRow } from "../../services/accounts";
import { serializeAddressWithOutcome } from "../../services/addresses/stored";
import { PointSchema } from "../../services/task-commands";

export const RoleEnum = z.enum(ROLES);

const UserPositionSchema = z
  .object({
    location: PointSchema,
    time: dateTime().openapi({ description: "Device time of the position." }),
    accuracy_m: z.number().nullable(),
  })
  .openapi("UserPosition");

export const UserSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    email: z.string().optional().openapi({ description: "Not shown to workers for other users." }),
    name: z.string(),
    is_active: z.boolean().optional(),
    account: z.string().url().nullable().optional().openapi({ description: "The user's default account." }),
    role: RoleEnum.nullable().openapi({ description: "Role in the caller's account." }),
    email_verified_at: dateTime()
      .nullable()
      .optional()
      .openapi({ description: "When the user confirmed the e-mail address (null: not verified)." }),
    created_at: dateTime().optional(),
    updated_at: dateTime().optional(),
    account_role: z.string().url().optional().openapi({
      description:
        "Only in `GET /users/me/`: the caller's own account role, where it sets its `on_duty` (contract §28).",
    }),
    on_duty: z.boolean().optional().openapi({
      description: "Only in `GET /users/me/`: whether the caller is on duty (contract §28).",
    }),
    position: UserPositionSchema.nullable().optional().openapi({
      description:
        "In GET answers (contract §28): the latest stored position, shown to the account's admins, managers and integration users and to the user itself; null for every other viewer, and when there is none.",
    }),
  })
  .openapi("User");

/** A user's position as GET answers show it. */
export function serializeFix(r: RenderCtx, f: Fix | null | undefined) {
  return f
    ? {
        location: { type: "Point" as const, coordinates: [f.lon, f.lat] },
        time: ts(r, f.time),
        accuracy_m: f.accuracy_m,
      }
    : null;
}

export const UserCreateSchema = z
  .object({
    email: emailAddress(),
    name: z.string().max(200).optional(),
    password: z.string().min(8).max(256).optional().openapi({
      description:
        "Without it the user gets an activation e-mail. Ignored when the e-mail is already registered (that user gets an invitation).",
    }),
    role: RoleEnum,
  })
  .openapi("UserCreate", { example: { email: "driver@example.com", name: "Driver", role: "worker" } });

export const ActivateSchema = z
  .object({ token: z.string().min(1).max(200), password: z.string().min(8).max(256) })
  .openapi("UserActivate", {
    example: { token: "<token from the activation e-mail>", password: "a long new password" },
  });

export const TokenSchema = z.object({ token: z.string().min(1).max(200) }).openapi("UserVerifyEmailConfirm");

export const HijackSchema = z
  .object({
    token: z
      .string()
      .openapi({ description: "Session JWT acting as the user for 1 hour (`act` names the admin)." }),
  })
  .openapi("HijackToken");

export const UserPatchSchema = z
  .object({
    name: z.string().max(200),
    email: emailAddress(),
    password: z.string().min(8).max(256),
    current_password: z
      .string()
      .max(256)
      .openapi({ description: "Required when users change their own password or e-mail." }),
    is_active: z.boolean().openapi({ description: "Admins only." }),
  })
  .partial()
  .openapi("UserPatch", {
    example: { password: "a long new password", current_password: "the old password" },
  });

/** Workers see of other users only what a field app needs: who they are, not how to reach them. */
export function serializeUserFor(r: RenderCtx, viewer: { role: string; userId: string }, u: UserRow) {
  if (viewer.role !== "worker" || viewer.userId === u.id) return serializeUser(r, u);
  return { id: u.id, url: link(r, "users", u.id), name: u.name, role: u.role ?? null };
}

export function serializeUser(r: RenderCtx, u: UserRow) {
  return {
    id: u.id,
    url: link(r, "users", u.id),
    email: u.email,
    name: u.name,
    is_active: Boolean(u.is_active),
    account: link(r, "accounts", u.default_account_id),
    role: u.role ?? null,
    email_verified_at: ts(r, u.email_verified_at ?? null),
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
    state: z.enum(["active", "pending"]).openapi({
      description:
        "`pending`: an invitation (or a new user not yet activated); grants nothing until accepted.",
    }),
    show_travel_estimates: z.boolean(),
    vehicle_capacity: z
      .array(z.number().int())
      .openapi({ description: "Up to 3 capacities (one per dimension); empty = unlimited." }),
    start_address: AddressSchema.nullable().openapi({ description: "Where the worker's routes start." }),
    end_address: AddressSchema.nullable().openapi({ description: "Where the worker's routes end." }),
    on_duty: z.boolean().openapi({
      description:
        "On duty (contract §28): positions are stored only then. Set by the role's own user or the account's admins and managers.",
    }),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("AccountRole");

export const AccountRoleCreateSchema = z
  .object({
    user: hyperlinkSchema("users", "URL of a user of this account.", { blank: true }).optional(),
    email: emailAddress().optional().openapi({
      description: "Any e-mail: a registered user is invited, a new one gets an activation e-mail.",
    }),
    role: RoleEnum,
  })
  .refine((v) => v.user || v.email, { message: "Give `user` or `email`.", path: ["user"] })
  // The refinement above, as JSON Schema (issue 46).
  .openapi(
    "AccountRoleCreate",
    jsonSchemaRules({
      example: { email: "dispatcher@example.com", role: "manager" },
      anyOf: [{ required: ["user"], properties: { user: { minLength: 1 } } }, { required: ["email"] }],
    }),
  );

/** An address to store must say where: text, a point, or both (null removes it). */
const AccountRolePatchFields = z
  .object({
    role: RoleEnum,
    is_active: z.boolean(),
    show_travel_estimates: z
      .boolean()
      .openapi({ description: "Whether the worker's apps show travel estimates." }),
    vehicle_capacity: z
      .array(z.number().int().min(0).max(1_000_000_000))
      .max(3, "At most 3 capacity dimensions.")
      .openapi({ description: "Up to 3 non-negative integers (e.g. kg, parcels, m³); empty = unlimited." }),
    start_address: AddressInputSchema.nullable().openapi({
      description: "Geocoded like a task's address; null removes it.",
    }),
    end_address: AddressInputSchema.nullable().openapi({
      description: "Geocoded like a task's address; null removes it.",
    }),
    on_duty: z.boolean().openapi({
      description: "Admins, managers, and the role's own user (the only field it may set).",
    }),
  })
  .partial();
export const AccountRolePatchSchema = refineDepots(AccountRolePatchFields).openapi("AccountRolePatch");

export function serializeRole(r: RenderCtx, a: AccountRoleRow) {
  return {
    id: a.id,
    url: link(r, "account_roles", a.id),
    account: link(r, "accounts", a.account_id),
    user: link(r, "users", a.user_id),
    role: a.role,
    is_active: Boolean(a.is_active),
    state: a.state,
    show_travel_estimates: Boolean(a.show_travel_estimates),
    vehicle_capacity: JSON.parse(a.vehicle_capacity || "[]") as number[],
    start_address: serializeAddressWithOutcome(r, a.start_address),
    end_address: serializeAddressWithOutcome(r, a.end_address),
    on_duty: Boolean(a.on_duty),
    created_at: ts(r, a.created_at),
    updated_at: ts(r, a.updated_at),
  };
}
