/**
 * Orders and their tasks: `input` reads bodies into drafts, `write` stores them (one
 * transaction per order; its comment explains the upsert), `read` reads them back.
 */
export { type OrderTarget, type OrderWriteResult, orderLimits, tooManyOrders, tooManyTasks } from "./input";
export { getOrder, getOrderRow, listOrders, orderRelations, renderOrder } from "./read";
export { type DocumentRow, type OrderRow, serializeOrder } from "./serialize";
export { deleteOrder, writeOrders } from "./write";
