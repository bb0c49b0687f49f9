import { Counter, Gauge, type Registry } from 'prom-client';
import type { ProjectorObserver } from './projector.js';
import type { ProjectionsReport } from './status.js';

/**
 * Prometheus metrics of the projections: what this process applied and dead-lettered (counters;
 * events per second is their rate), and lag and recorded dead letters as the database tells them
 * at scrape time (gauges, shared by every process).
 */
export function registerProjectionMetrics(registry: Registry, report: () => Promise<ProjectionsReport>): ProjectorObserver {
  const applied = new Counter({
    name: 'supply_projection_events_applied_total',
    help: 'Events this process applied to read tables, by projection',
    labelNames: ['projection'],
    registers: [registry],
  });
  const deadLettered = new Counter({
    name: 'supply_projection_dead_lettered_total',
    help: 'Events this process dead-lettered (recorded and skipped), by projection',
    labelNames: ['projection'],
    registers: [registry],
  });
  const fromReport = (name: string, help: string, pick: (p: ProjectionsReport['projections'][number]) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['projection'],
      registers: [registry],
      async collect() {
        const current = await report();
        for (const projection of current.projections) this.set({ projection: projection.projection }, pick(projection));
      },
    });
  fromReport('supply_projection_lag_events', 'Visible log events the projection has not seen yet', (p) => p.lagEvents);
  fromReport('supply_projection_lag_seconds', 'Age in seconds of the oldest log event the projection has not applied (0 when caught up), measured at scrape time', (p) => p.lagSeconds);
  fromReport('supply_projection_dead_letters', 'Dead letters recorded for the active generation', (p) => p.deadLetters);
  fromReport('supply_projection_held', '1 while the projection holds before an event of a schema version newer than this release reads', (p) => (p.held === undefined ? 0 : 1));
  return {
    applied: (projection, events) => applied.inc({ projection }, events),
    deadLettered: (letter) => deadLettered.inc({ projection: letter.projection }),
  };
}
