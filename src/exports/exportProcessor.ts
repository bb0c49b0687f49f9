import { createHash } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { composeBriefing } from '../reporting/briefing.js';
import type { AnalyticsCaps } from '../config/analyticsCaps.js';
import { isoUtc, type Clock } from '../platform/clock.js';
import type { Logger } from '../platform/logger.js';
import type { BlobStore, StoredFile } from './blobStore.js';
import { renderBriefingCsv } from './briefingCsv.js';
import { markFailed, markReady, startBuilding, type ExportJob } from './exportJobs.js';
import type { ExportProcessor } from './exportQueue.js';

export const csvContentType = 'text/csv; charset=utf-8';

export function briefingFileName(period: ExportJob['period']): string {
  return `management-briefing-${period}.csv`;
}

/** Where a job's file is stored: under its tenant (base64url, so any id is a safe path segment) and id. */
export function exportFileOf(job: Pick<ExportJob, 'tenantId' | 'exportId' | 'period'>): StoredFile {
  const fileName = briefingFileName(job.period);
  return {
    key: `exports/${Buffer.from(job.tenantId, 'utf8').toString('base64url')}/${job.exportId}/${fileName}`,
    fileName,
    contentType: csvContentType,
  };
}

export type ExportProcessorDependencies = {
  readonly pool: DatabasePool;
  readonly store: BlobStore;
  readonly clock: Clock;
  readonly caps: AnalyticsCaps;
  readonly logger: Logger;
  readonly observe?: (outcome: 'ready' | 'failed', seconds: number) => void;
};

/**
 * Builds one export: pending (or failed, or a crashed build) → building → the briefing as it
 * stands now, as CSV, stored whole → ready with size and checksum. A failure marks the job failed
 * with `processing_error` and is thrown again so that the queue logs and retries it.
 */
export function createExportProcessor(deps: ExportProcessorDependencies): ExportProcessor {
  return async (task, attempt) => {
    const started = performance.now();
    const job = await startBuilding(deps.pool, task.tenantId, task.exportId, deps.clock.now());
    if (job === undefined) {
      deps.logger.info({ exportId: task.exportId }, 'export job has nothing to build (gone, expired or already ready)');
      return;
    }
    const log = deps.logger.child({ exportId: job.exportId, attempt: attempt.number });
    try {
      const asOf = isoUtc(deps.clock.now());
      const briefing = await composeBriefing(deps.pool, job.tenantId, { period: job.period, asOf, caps: deps.caps, language: job.language });
      const bytes = renderBriefingCsv(briefing.figures);
      const checksum = createHash('sha256').update(bytes).digest('hex');
      const file = exportFileOf(job);
      await deps.store.put(file, bytes);
      const built = { asOf, byteSize: bytes.length, checksum, storageKey: file.key, fileName: file.fileName };
      if (!(await markReady(deps.pool, job, built, attempt.number, deps.clock.now()))) {
        // Deleted by retention while it was being built: its file must not outlive it.
        await deps.store.delete(file.key);
        log.info('export job was deleted while building; its file was removed');
        return;
      }
      const seconds = (performance.now() - started) / 1000;
      deps.observe?.('ready', seconds);
      log.info({ byteSize: bytes.length, checksum, figures: briefing.figures.length, seconds }, 'export ready');
    } catch (error) {
      // The queue logs the failure, with whether it retries.
      deps.observe?.('failed', (performance.now() - started) / 1000);
      await markFailed(deps.pool, job, attempt, deps.clock.now());
      throw error;
    }
  };
}
