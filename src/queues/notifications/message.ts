/**
 * One planned notification to send (fd-notifications queue): the row holds the rest. `fence`
 * is the row's `enqueued_at` when this message was sent: a message whose fence no longer
 * matches was superseded (re-queued by the sweeper, or rescheduled after a failure) and is dropped.
 */
export type NotificationMessage = { sendId: string; fence: number; baseUrl: string };
