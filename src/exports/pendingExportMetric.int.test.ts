import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPostgresTestDatabase, type TestDatabase } from '../../test/support/databases.js';
import { services } from '../../test/support/services.js';
import { fixedClock } from '../platform/clock.js';
import { insertExportJob, startBuilding } from './exportJobs.js';
import { registerPendingExportMetric } from './pendingExportMetric.js';

const requestedAt = new Date('2026-11-02T08:00:00.000Z');

describe.runIf(services.postgres)('supply_export_oldest_pending_seconds (real Postgres)', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createPostgresTestDatabase();
  });
  afterAll(async () => database?.close());

  test('given no job, 0; given jobs no worker took, the age of the oldest at each scrape; once taken, the next one', async () => {
    const clock = fixedClock(requestedAt);
    const registry = new Registry();
    registerPendingExportMetric(registry, database.pool, clock);
    const value = async () => (await registry.getSingleMetric('supply_export_oldest_pending_seconds')?.get())?.values.map((v) => v.value);

    expect(await value()).toEqual([0]);
    const job = (exportId: string) => ({ tenantId: 'ws_pending', exportId, period: 'daily' as const, language: 'en' as const, requestedBy: 'svc_test_abc', requestId: exportId });
    await insertExportJob(database.pool, job('exp_first'), requestedAt);
    await insertExportJob(database.pool, job('exp_second'), new Date(requestedAt.getTime() + 60_000));

    clock.advance(90_000);
    expect(await value()).toEqual([90]);
    // Nothing takes them: the figure keeps growing.
    clock.advance(600_000);
    expect(await value()).toEqual([690]);
    // A worker takes the oldest: the next one is the oldest still waiting.
    await startBuilding(database.pool, 'ws_pending', 'exp_first', clock.now());
    expect(await value()).toEqual([630]);
    await startBuilding(database.pool, 'ws_pending', 'exp_second', clock.now());
    expect(await value()).toEqual([0]);
  });
});
