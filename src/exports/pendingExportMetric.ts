import { Gauge, type Registry } from 'prom-client';
import type { CommonQueryMethods } from 'slonik';
import type { Clock } from '../platform/clock.js';
import { oldestPendingRequestedAt } from './exportJobs.js';

/**
 * `supply_export_oldest_pending_seconds`: how long the oldest export job has waited for a worker
 * (0 when none waits), read from the jobs table at scrape time by every process, so that it keeps
 * growing when no worker takes jobs (they would stay `pending` with no other sign). Absent while
 * the database does not answer.
 */
export function registerPendingExportMetric(registry: Registry, db: CommonQueryMethods, clock: Clock): void {
  new Gauge({
    name: 'supply_export_oldest_pending_seconds',
    help: 'Age in seconds of the oldest export job still pending (waiting for a worker), 0 when none',
    registers: [registry],
    async collect() {
      this.reset();
      const now = clock.now();
      const oldest = await oldestPendingRequestedAt(db, now).catch(() => null);
      if (oldest === null) return;
      this.set(oldest === undefined ? 0 : Math.max(0, (now.getTime() - Date.parse(oldest)) / 1000));
    },
  });
}
