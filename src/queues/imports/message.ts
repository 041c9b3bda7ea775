/** One step of an import (fd-imports queue): staging, or a bounded number of chunks. The row holds the progress. */
export type ImportMessage = { importId: string; baseUrl: string };
