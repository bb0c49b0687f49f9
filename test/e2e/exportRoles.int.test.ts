import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { runCli, startCli } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { createPostgresTestDatabase, type TestDatabase } from '../support/databases.js';
import { testRedisUrl } from '../support/services.js';

type Started = Awaited<ReturnType<typeof startCli>>;

const readyJob = z.object({ exportId: z.string(), status: z.literal('ready'), byteSize: z.number(), checksum: z.string(), downloadUrl: z.string() });

/**
 * The deployment the architecture describes: an API process (with the projector) producing to
 * BullMQ, and two worker processes consuming the same queue, all on one Postgres and one Redis.
 */
describe('exports across processes: serve --roles api,projector and two serve --roles worker on BullMQ', () => {
  let database: TestDatabase;
  let dataDir: string;
  const queueName = `test-exports-${randomBytes(6).toString('hex')}`;
  const processes: Started[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createPostgresTestDatabase({ migrated: false });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'supply-roles-'));
    env = { DATABASE_URL: database.url, REDIS_URL: testRedisUrl, EXPORT_QUEUE_NAME: queueName, DATA_DIR: dataDir, LOG_LEVEL: 'info' };
  });
  afterAll(async () => {
    for (const started of processes) await started.stop();
    const { hostname, port } = new URL(testRedisUrl);
    const queue = new Queue(queueName, { connection: { host: hostname, port: Number(port), maxRetriesPerRequest: 1 } });
    await queue.obliterate({ force: true });
    await queue.close();
    await database?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  test('every export is built by a worker process, none by the API process, and each download matches', async () => {
    const seeded = await runCli(['seed', '--tenants', '1', '--seed', '3', '--as-of', '2026-11-01'], env);
    expect(seeded.code, seeded.stderr).toBe(0);
    const tenant = z.object({ tenants: z.array(z.object({ workspaceId: z.string(), memberIds: z.array(z.string()) })) }).parse(JSON.parse(seeded.stdout)).tenants[0];
    if (!tenant) throw new Error('no tenant');

    const api = await startCli(['serve', '--port', '0', '--roles', 'api,projector'], env, /"port":(\d+),"roles":\["api","projector"\],"msg":"serving"/);
    processes.push(api);
    for (let i = 0; i < 2; i += 1) processes.push(await startCli(['serve', '--port', '0', '--roles', 'worker'], env, /"roles":\["worker"\],"msg":"serving"/));
    const [, ...workers] = processes;
    const port = /"port":(\d+),"roles":\["api","projector"\]/.exec(api.output())?.[1];
    const base = `http://127.0.0.1:${port ?? ''}`;
    expect(api.output()).toMatch(/"store":"local","queue":"bullmq","builds":false/);
    for (const worker of workers) expect(worker.output()).toMatch(/"store":"local","queue":"bullmq","builds":true/);

    const issued = await runCli(['keys', 'issue', '--workspace', tenant.workspaceId, '--member', tenant.memberIds[0] ?? '', '--scopes', 'analytics:read'], env);
    expect(issued.code, issued.stderr).toBe(0);
    const auth = { authorization: `Bearer ${z.object({ key: z.string() }).parse(JSON.parse(issued.stdout)).key}` };
    const waited = await runCli(['projections', 'wait', '--timeout', '60'], env);
    expect(waited.code, waited.stderr).toBe(0);

    const exportIds: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      const posted = await fetch(`${base}/v1/analytics/exports`, { method: 'POST', headers: auth });
      expect(posted.status).toBe(202);
      exportIds.push(z.object({ exportId: z.string() }).parse(await posted.json()).exportId);
    }
    for (const exportId of exportIds) {
      const ready = await eventually(async () => readyJob.parse(await (await fetch(`${base}/v1/analytics/exports/${exportId}`, { headers: auth })).json()));
      const file = Buffer.from(await (await fetch(ready.downloadUrl)).arrayBuffer());
      expect(file.length).toBe(ready.byteSize);
      expect(createHash('sha256').update(file).digest('hex')).toBe(ready.checksum);
    }
    const builtBy = (started: Started) => exportIds.filter((id) => new RegExp(`"exportId":"${id}".*"msg":"export ready"`).test(started.output()));
    expect(builtBy(api)).toEqual([]);
    expect(workers.flatMap(builtBy).sort()).toEqual([...exportIds].sort());

    for (const started of processes.splice(0)) expect(await started.stop()).toBe(0);
  });
});
