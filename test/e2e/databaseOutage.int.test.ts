import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { postgresCut } from '../../drill/postgresCut.js';
import { runLoad } from '../../drill/load.js';
import { shutdownGraceMs } from '../../src/main/serve.js';
import { runCli, startCli } from '../support/cli.js';
import { createPostgresTestDatabase, type TestDatabase } from '../support/databases.js';
import { eventually } from '../support/eventually.js';
import { postgresProxy } from '../support/postgresProxy.js';
import type { TcpProxy } from '../support/tcpProxy.js';

type Started = Awaited<ReturnType<typeof startCli>>;

/**
 * A real `serve --roles api,projector` whose only way to Postgres is a TCP proxy, read by 24
 * clients while the proxy goes away (connections reset, new ones refused) or partitions (silence
 * both ways), then comes back. Before the fix, each cut under load lost a pool slot per running
 * query until every request waited for good, /readyz stayed 200 and SIGTERM could not stop it.
 */
const serving = /"port":(\d+),"roles":\["api","projector"\],"msg":"serving"/;

describe('Postgres outage under load: serve through a proxy', () => {
  let database: TestDatabase;
  let dataDir: string;
  let proxy: TcpProxy;
  let api: Started | undefined;
  let base: string;
  let key: string;
  /** Every proxy and process started, the shared ones and a test's own, for the clean-up. */
  const proxies: TcpProxy[] = [];
  const processes: Started[] = [];

  /** A proxy to Postgres and a `serve --roles api,projector` reaching the database only through it. */
  const serveThroughProxy = async (): Promise<{ proxy: TcpProxy; api: Started; base: string }> => {
    const { proxy: own, url } = await postgresProxy(database.url);
    proxies.push(own);
    const started = await startCli(
      ['serve', '--port', '0', '--roles', 'api,projector'],
      { DATABASE_URL: url, DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: '1000000', LOG_LEVEL: 'info' },
      serving,
    );
    processes.push(started);
    return { proxy: own, api: started, base: `http://127.0.0.1:${serving.exec(started.output())?.[1] ?? ''}` };
  };

  beforeAll(async () => {
    database = await createPostgresTestDatabase({ migrated: false });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'supply-outage-'));
    const direct = { DATABASE_URL: database.url, DATA_DIR: dataDir };
    const seeded = await runCli(['seed', '--tenants', '1', '--seed', '11', '--days', '30', '--as-of', '2026-11-01'], direct);
    expect(seeded.code, seeded.stderr).toBe(0);
    const tenant = z.object({ tenants: z.array(z.object({ workspaceId: z.string(), memberIds: z.array(z.string()) })) }).parse(JSON.parse(seeded.stdout)).tenants[0];
    if (!tenant) throw new Error('no tenant');
    const issued = await runCli(['keys', 'issue', '--workspace', tenant.workspaceId, '--member', tenant.memberIds[0] ?? '', '--scopes', 'orders:read'], direct);
    expect(issued.code, issued.stderr).toBe(0);
    key = z.object({ key: z.string() }).parse(JSON.parse(issued.stdout)).key;

    ({ proxy, api, base } = await serveThroughProxy());
    const waited = await runCli(['projections', 'wait', '--timeout', '60'], direct);
    expect(waited.code, waited.stderr).toBe(0);
  });

  afterAll(async () => {
    for (const started of processes) if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGKILL');
    for (const own of proxies) await own.stop();
    await database?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  test.each(['stop', 'partition'] as const)(
    'Postgres %s for 10 s under 24 clients: every request is answered, 200 or 503 common.service_unavailable (or 500 past its deadline in a partition); 200 again once it is back; /readyz 503 meanwhile',
    async (mode) => {
      const figures = await postgresCut({ apiBases: [base], proxies: [proxy], key }, { clients: 24, cutMs: 10_000, mode, warmMs: 1_500, afterMs: 6_000 });
      expect(figures.failures).toEqual([]);
      expect(figures.noAnswer).toBe(0);
      // How long requests and the recovery take is bounded by the drill (`npm run drill`), not here.
      if (figures.overBounds.length > 0) console.info(`past the drill's bounds: ${figures.overBounds.join('; ')}`);
      // Refused connections fail at once; in a 10 s partition a request waits for its query timeout
      // (12 s), so it may be answered 200 once Postgres is back.
      if (mode === 'stop') expect(figures.duringCut['503 common.service_unavailable'] ?? 0).toBeGreaterThan(0);
      expect(figures.recoveryMs).not.toBeNull();
      expect(Object.keys(figures.readyzDuringCut)).toEqual(['503']);
      expect(Object.keys(figures.readyzAfter)).toEqual(['200']);
      // The projector role survives too: its lock connection was lost with the rest.
      expect({ exitCode: api?.child.exitCode, signal: api?.child.signalCode }).toEqual({ exitCode: null, signal: null });
    },
    90_000,
  );

  test('SIGTERM while Postgres is partitioned and clients are waiting: the process ends', async () => {
    // A process and proxy of its own: the process ends here, the outage tests need the shared one.
    const { proxy, api: running, base } = await serveThroughProxy();
    const stop = new AbortController();
    const load = runLoad({ bases: [base], path: '/v1/orders?limit=50', key, clients: 24, stop: stop.signal });
    // Serving through the proxy, then cut off: queries sent into the partition are requests waiting.
    await eventually(async () => expect((await fetch(`${base}/v1/orders?limit=1`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200));
    proxy.partition();
    await eventually(() => expect(proxy.droppedBytes()).toBeGreaterThan(0));
    const exited = new Promise<number>((resolve) => running.child.once('exit', () => resolve(performance.now())));
    const signalledAt = performance.now();
    running.child.kill('SIGTERM');
    // It ends (the drill holds it to its grace period of shutdownGraceMs; the figure is logged here).
    const exitedAt = await exited;
    stop.abort();
    proxy.heal();
    await proxy.start();
    await load;
    process.stderr.write(`[database outage] SIGTERM during a partition: ended after ${(exitedAt - signalledAt).toFixed(0)} ms (grace ${shutdownGraceMs} ms)\n`);
  }, 60_000);
});
