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
  address: AddressInputSchema.nullable()
    .optional()
    .openapi({ description: "Required on create; geocoded like a task's." }),
  contact: ContactSchema.nullable().optional(),
  metafields: z.record(z.string(), z.any()).nullable().optional(),
});

export type ContactAddressWriteBody = z.infer<typeof ContactAddressWriteSchema>;

/**
 * POST /contact_addresses/: `address` is required and may not be null (services/contact-addresses
 * `parseBody`, with DRF's "This field is required." / "This field may not be null."), where PATCH
 * and PUT take null. zod takes null here too, so that the service answers it with the other
 * fields' errors as before; the document says not null (`not`), which finishDocument writes as
 * the component itself (issue 46).
 */
export const ContactAddressCreateSchema = ContactAddressWriteSchema.extend({
  address: AddressInputSchema.nullable()
    .openapi({ description: "Required; geocoded like a task's.", not: { type: "null" } })
    .optional(),
}).openapi("ContactAddressCreate", { required: ["address"] });

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
