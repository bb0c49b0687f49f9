import cron from 'node-cron';
import type { DatabasePool } from 'slonik';
import { deleteEvidenceServedBefore } from '../reporting/evidence.js';
import type { Clock } from '../platform/clock.js';
import type { Logger } from '../platform/logger.js';
import type { BlobStore } from './blobStore.js';
import { deleteJobs, expiredJobs, tenantsWithKeys, unfinishedJobs } from './exportJobs.js';
import { exportRetryPolicy, type ExportQueue } from './exportQueue.js';

/** A job untouched this long while pending or building has lost its queue entry or its worker. */
export const staleJobMs = 2 * 60 * 1000;
const batchSize = 500;

export type MaintenanceReport = { readonly deletedJobs: number; readonly deletedEvidence: number; readonly requeued: number };

export type ExportMaintenanceDependencies = {
  readonly pool: DatabasePool;
  readonly store: BlobStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly evidenceRetentionMs: number;
  /** When given, jobs whose queue entry was lost are queued again. */
  readonly queue?: ExportQueue;
};

/**
 * One pass, tenant by tenant: jobs past the 7-day retention are deleted with their files (files
 * first, so a file never outlives its row unnoticed), evidence no answer has carried within its
 * retention is deleted in batches, and stale unfinished jobs are queued again (the queue drops a
 * job it already holds).
 */
export async function runExportMaintenance(deps: ExportMaintenanceDependencies): Promise<MaintenanceReport> {
  const now = deps.clock.now();
  const evidenceCutoff = new Date(now.getTime() - deps.evidenceRetentionMs).toISOString();
  let deletedJobs = 0;
  let deletedEvidence = 0;
  let requeued = 0;
  for (const tenantId of await tenantsWithKeys(deps.pool)) {
    for (;;) {
      const expired = await expiredJobs(deps.pool, tenantId, now, batchSize);
      if (expired.length === 0) break;
      for (const job of expired) {
        if (job.storageKey !== null) await deps.store.delete(job.storageKey);
      }
      await deleteJobs(deps.pool, tenantId, expired.map((job) => job.exportId), now);
      deletedJobs += expired.length;
      if (expired.length < batchSize) break;
    }
    for (;;) {
      const count = await deleteEvidenceServedBefore(deps.pool, tenantId, evidenceCutoff, 5000);
      deletedEvidence += count;
      if (count < 5000) break;
    }
    if (deps.queue !== undefined) {
      for (const job of await unfinishedJobs(deps.pool, tenantId, now, staleJobMs, exportRetryPolicy.attempts)) {
        await deps.queue.enqueue({ tenantId, exportId: job.exportId });
        requeued += 1;
      }
    }
  }
  const report = { deletedJobs, deletedEvidence, requeued };
  if (deletedJobs + deletedEvidence + requeued > 0) deps.logger.info(report, 'export maintenance');
  return report;
}

/** Runs the maintenance every minute (UTC), never two passes at once; a failed pass is logged and the next one tries again. */
export function scheduleExportMaintenance(deps: ExportMaintenanceDependencies): { stop(): Promise<void> } {
  const task = cron.schedule(
    '* * * * *',
    async () => {
      try {
        await runExportMaintenance(deps);
      } catch (error) {
        deps.logger.error({ err: error }, 'export maintenance failed');
      }
    },
    { name: 'export-maintenance', timezone: 'UTC', noOverlap: true },
  );
  return {
    stop: async () => {
      await task.destroy();
    },
  };
}
