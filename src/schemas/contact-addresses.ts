import { z } from "@hono/zod-openapi";
import { dateTime } from "../http/openapi";
import { paginationQuery } from "../http/pagination";
import { hyperlinkSchema } from "../http/urls";
import { AddressInputSchema, AddressSchema, ContactSchema } from "./tasks";

export const ContactAddressWriteSchema = z.object({
  account: hyperlinkSchema("accounts", "The caller's account (optional).").nullable().optional(),
  external_id: z
    .string()
    .max(255)
    .nullable()
    .optional()
    .openapi({ description: "Unique in the account; tasks refer to it with contact_address_external_id." }),
  address: AddressInputSchema.nullable().optional().openapi({ description: "Geocoded like a task's." }),
  contact: ContactSchema.nullable().optional(),
  metafields: z.record(z.string(), z.any()).nullable().optional(),
});

export type ContactAddressWriteBody = z.infer<typeof ContactAddressWriteSchema>;

/**
 * `address` as every write takes it (services/contact-addresses `parseBody`): not null (DRF's
 * "This field may not be null."), required by POST and PUT ("This field is required."). zod takes
 * null here, so that the service answers it beside the other fields' errors; the document says
 * not null (`not`), which finishDocument writes as the component itself (issues 46, 56).
 */
const addressNotNull = (description: string) =>
  AddressInputSchema.nullable()
    .openapi({ description, not: { type: "null" } })
    .optional();

/** POST /contact_addresses/: `address` required. */
export const ContactAddressCreateSchema = ContactAddressWriteSchema.extend({
  address: addressNotNull("Required; geocoded like a task's."),
}).openapi("ContactAddressCreate", { required: ["address"] });

/** PUT /contact_addresses/{id}/: a whole contact address, so its `address` too. */
export const ContactAddressUpdateSchema = ContactAddressWriteSchema.extend({
  address: addressNotNull("Required; geocoded like a task's."),
}).openapi("ContactAddressUpdate", { required: ["address"] });

/** PATCH /contact_addresses/{id}/: the fields sent; `address`, when sent, not null. */
export const ContactAddressPatchSchema = ContactAddressWriteSchema.extend({
  address: addressNotNull("Geocoded like a task's; may not be null."),
}).openapi("ContactAddressPatch");

export const ContactAddressSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    account: z.string().url(),
    external_id: z.string().nullable(),
    address: AddressSchema,
    contact: z.object({
      name: z.string(),
      company: z.string(),
      emails: z.array(z.string()),
      phones: z.array(z.string()),
      notes: z.string(),
    }),
    metafields: z.record(z.string(), z.any()),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("ContactAddress");

export const ContactAddressListQuery = z
  .object({
    ...paginationQuery,
    external_id: z.string().optional().openapi({ description: "Exact external id." }),
  })
  .strict();
