import type { Logger } from '../platform/logger.js';
import type { BlobStore } from './blobStore.js';
import type { ExportQueue } from './exportQueue.js';

/** What the export operations use: the queue to hand jobs to, and the store that links to built files. */
export type ExportService = {
  readonly queue: ExportQueue;
  readonly store: BlobStore;
  readonly logger: Logger;
};
