/**
 * Messages of the fd-files queue (file post-processing, architecture.md "Queues"):
 * - `thumbnail`: make the thumbnail of an image document or signature;
 * - `delete`: remove R2 objects whose records are gone, when deleting them inline failed.
 * Both are idempotent, so a redelivery changes nothing.
 */
export type FilesMessage = { type: "thumbnail"; attachmentId: string } | { type: "delete"; keys: string[] };

export type FilesQueue = Pick<Queue<FilesMessage>, "send">;

/**
 * Enqueue after the write has committed. A failure is logged, not raised: the record is
 * stored; a thumbnail that is never made leaves `thumbnail` null, an object that is never
 * deleted is unreachable through the API (its UUID key is only in the deleted record).
 */
export async function enqueueFiles(queue: FilesQueue, body: FilesMessage): Promise<void> {
  try {
    await queue.send(body);
  } catch (err) {
    console.error(
      JSON.stringify({ level: "error", msg: "files message not enqueued", body, error: String(err) }),
    );
  }
}
