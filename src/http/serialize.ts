import type { Ctx } from "./openapi";
import { formatTimestamp } from "./timezones";
import { type Collection, reverse } from "./urls";

/** What serializers need from the request: where links point and which zone to render in. */
export type RenderCtx = { baseUrl: string; timeZone: string | null };

export const renderCtx = (c: Ctx): RenderCtx => ({ baseUrl: c.get("baseUrl"), timeZone: c.get("timeZone") });

export const ts = (r: RenderCtx, ms: number | null | undefined) => formatTimestamp(ms, r.timeZone);
export const link = (r: RenderCtx, collection: Collection, id: string | null | undefined) =>
  reverse(r.baseUrl, collection, id);
