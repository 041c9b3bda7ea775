import { link, type RenderCtx, ts } from "../../http/serialize";
import { serializeAttachment } from "../files/serialize";
import type { AttachmentRow } from "../files/types";
import { parseJson } from "../tasks/types";

export type OrderRow = {
  id: string;
  account_id: string;
  external_id: string | null;
  reference: string;
  description: string;
  client_id: string | null;
  metafields: string;
  orderer: string | null;
  assignee_id: string | null;
  auto_assign: number;
  created_by: string | null;
  recurrence_id: string | null;
  calendar_time: string | null;
  created_at: number;
  updated_at: number;
};

/** An order's documents are `attachments` rows of kind `document` (rendered by the files service). */
export type DocumentRow = AttachmentRow;

/** The Order of interface §2.5. `tasks` in the order of tasks_data, then tasks linked later. */
export function serializeOrder(
  r: RenderCtx,
  o: OrderRow,
  related: { taskIds: string[]; documents: DocumentRow[]; expandDocuments?: boolean },
) {
  return {
    id: o.id,
    url: link(r, "orders", o.id),
    account: link(r, "accounts", o.account_id),
    external_id: o.external_id,
    reference: o.reference,
    client: link(r, "clients", o.client_id),
    metafields: parseJson<Record<string, unknown>>(o.metafields, {}),
    orderer: parseJson<{ name: string } | null>(o.orderer, null),
    tasks: related.taskIds.map((id) => link(r, "tasks", id)),
    assignee: link(r, "users", o.assignee_id),
    auto_assign: Boolean(o.auto_assign),
    created_by: link(r, "users", o.created_by),
    created_at: ts(r, o.created_at),
    updated_at: ts(r, o.updated_at),
    description: o.description,
    recurrence: link(r, "recurrences", o.recurrence_id),
    calendar_time: parseJson(o.calendar_time, null),
    documents: related.expandDocuments
      ? related.documents.map((d) => serializeAttachment(r, d))
      : related.documents.map((d) => link(r, "documents", d.id)),
  };
}
