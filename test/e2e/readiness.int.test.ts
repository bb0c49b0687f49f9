import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { allProjections } from '../../projections/index.js';
import { seed } from '../../src/console/seed.js';
import { eventually, visibleThrough } from '../../src/eventStore/eventStoreContractHelpers.js';
import { newEvent, streams } from '../../src/events/index.js';
import type { EventStore, LogPosition } from '../../src/eventStore/eventStore.js';
import { createPostgresEventStore } from '../../src/eventStore/postgresEventStore.js';
import { fixedClock } from '../../src/platform/clock.js';
import { loadGenerations } from '../../src/projecting/generations.js';
import { startProjector } from '../../src/projecting/projector.js';
import { projectionsReport, waitForProjections } from '../../src/projecting/status.js';
import { readyLag } from '../../src/main/readiness.js';
import { startCli } from '../support/cli.js';
import { createPostgresTestDatabase, silentLogger, type TestDatabase } from '../support/databases.js';
import { services } from '../support/services.js';

type Served = Awaited<ReturnType<typeof startCli>> & { readonly port: number };

async function serve(roles: string, env: Record<string, string>): Promise<Served> {
  const started = await startCli(['serve', '--roles', roles, '--port', '0'], env, /"port":(\d+),"roles"/);
  return { ...started, port: Number(/"port":(\d+),"roles"/.exec(started.output())?.[1]) };
}

async function readyz(served: Served): Promise<{ status: number; body: unknown }> {
  const answer = await fetch(`http://127.0.0.1:${served.port}/readyz`);
  return { status: answer.status, body: await answer.json() };
}

/** The value of a gauge of /metrics (the largest over its series), or undefined when absent. */
async function gauge(served: Served, name: string): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${served.port}/metrics`)).text();
  const values = [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].map((match) => Number(match[1]));
  return values.length === 0 ? undefined : Math.max(...values);
}

/** The log lines of a process (JSON on stderr) for requests to `url`. */
function requestLines(served: Served, url: string): { level: number; status: number }[] {
  return served
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string; url?: string; status: number })
    .filter((line) => line.msg === 'request' && line.url === url);
}

describe.runIf(services.postgres)('readiness and lag while the projector is stopped (real Postgres, serve processes)', () => {
  let database: TestDatabase;
  let eventStore: EventStore;
  let dataDir: string;
  let workspaceId: string;
  let clinicId: string;
  beforeAll(async () => {
    database = await createPostgresTestDatabase();
    eventStore = createPostgresEventStore({ pool: database.pool, kind: 'postgres', logger: silentLogger, connectionUri: database.url });
    const summary = await seed({ eventStore, params: { seed: 21, tenants: 1, days: 20, scale: 'small', asOf: '2026-11-01T00:00:00.000Z' } });
    const tenant = summary.tenants[0];
    if (tenant?.clinicIds[0] === undefined) throw new Error('the seed gave no clinic');
    workspaceId = tenant.workspaceId;
    clinicId = tenant.clinicIds[0];
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'supply-readiness-'));
    await catchUp();
  }, 240_000);
  afterAll(async () => {
    await eventStore?.close();
    await database?.close();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  /** Runs a projector until the projections are at the head of the log, then stops it. */
  const catchUp = async (): Promise<void> => {
    const projector = startProjector({ pool: database.pool, eventStore, projections: allProjections, logger: silentLogger });
    try {
      await waitForProjections(database.pool, eventStore, allProjections, 120);
    } finally {
      await projector.stop();
    }
  };

  const renames = async (count: number): Promise<LogPosition> => {
    const events = Array.from({ length: count }, (_, index) =>
      newEvent('ClinicRenamed', { clinicId, name: `Clínica ${index}` }, { eventId: randomUUID(), tenantId: workspaceId, occurredAt: new Date().toISOString() }),
    );
    return (await eventStore.append(streams.clinic(workspaceId, clinicId), events, 'any')).position;
  };

  test('lag is the age of the oldest event not applied, by the clock of whoever asks, and 0 when caught up', async () => {
    const caughtUp = await projectionsReport(database.pool, eventStore, allProjections, fixedClock('2030-01-01T00:00:00.000Z'));
    expect(caughtUp.projections.map((p) => p.lagSeconds)).toEqual(allProjections.map(() => 0));

    // Once the log shows them (a transaction still open elsewhere in the cluster holds its visible head back).
    await visibleThrough(eventStore, await renames(6));
    const [active] = await loadGenerations(database.pool, ['active']);
    if (active === undefined) throw new Error('no active generation');
    const oldest = (await eventStore.readAll(active.checkpoint, 1)).events[0];
    if (oldest === undefined) throw new Error('no event after the checkpoint');
    const clock = fixedClock(new Date(Date.parse(oldest.recordedAt) + 10_000));
    const first = await projectionsReport(database.pool, eventStore, allProjections, clock);
    // Every projection has the events to see (each sees every event of the log, applying those it handles).
    expect(first.projections.map((p) => [p.projection, p.lagEvents, p.lagSeconds])).toEqual(allProjections.map((p) => [p.name, 6, 10]));
    // No projector runs: the lag keeps growing with the clock.
    clock.advance(110_000);
    const later = await projectionsReport(database.pool, eventStore, allProjections, clock);
    expect(later.projections.map((p) => p.lagSeconds)).toEqual(allProjections.map(() => 120));
  }, 120_000);

  test('API processes that caught up stay ready however far behind the stopped projector leaves them; a worker too; a process started meanwhile waits until the projections catch up', async () => {
    await catchUp();
    const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, LOG_LEVEL: 'info' };
    const processes: Served[] = [];
    try {
      const apis = [await serve('api', env), await serve('api', env)];
      const worker = await serve('worker', env);
      processes.push(...apis, worker);
      for (const served of processes) expect(await readyz(served)).toMatchObject({ status: 200, body: { status: 'ready' } });

      // The projector is stopped; more events arrive than readyLag allows.
      await renames(readyLag.events + 1);
      for (const served of processes) {
        await eventually(async () => ((await gauge(served, 'supply_projection_lag_events')) ?? 0) > readyLag.events, 30_000);
        expect(await readyz(served)).toMatchObject({ status: 200, body: { status: 'ready', checks: { database: 'ok', projections: expect.stringMatching(/^behind: /) } } });
      }
      // The lag in seconds is measured at each scrape: it grows while nothing is applied.
      const [api] = apis;
      if (api === undefined) throw new Error('no API process');
      const lagBefore = (await gauge(api, 'supply_projection_lag_seconds')) ?? 0;
      await eventually(async () => ((await gauge(api, 'supply_projection_lag_seconds')) ?? 0) > lagBefore, 30_000);

      // A process that has never caught up does not take requests yet.
      const late = await serve('api', env);
      processes.push(late);
      expect(await readyz(late)).toMatchObject({ status: 503, body: { status: 'unavailable', checks: { projections: expect.stringMatching(/^behind: /) } } });
      // Its 503 is logged as a warning, not as a server error; health and metrics requests are not logged at info.
      await eventually(() => requestLines(late, '/readyz').length > 0, 10_000);
      expect(requestLines(late, '/readyz').map((line) => [line.status, line.level])).toEqual([[503, 40]]);
      await gauge(late, 'supply_ready');
      await fetch(`http://127.0.0.1:${late.port}/healthz`);
      expect([...requestLines(late, '/metrics'), ...requestLines(late, '/healthz')]).toEqual([]);

      await catchUp();
      await eventually(async () => (await readyz(late)).status === 200, 30_000);
      expect(await gauge(late, 'supply_projection_lag_seconds')).toBe(0);
    } finally {
      for (const served of processes) await served.stop();
    }
  }, 300_000);
});
