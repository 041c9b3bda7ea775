/**
 * One step of an export (fd-exports queue). The row in `data_exports` holds the progress; the
 * message names the step it continues, for the logs: whichever delivery commits a step first
 * wins (compare-and-set on `step`), so duplicates never write a row twice.
 */
export type ExportMessage = { exportId: string; accountId: string; baseUrl: string; step: number };
