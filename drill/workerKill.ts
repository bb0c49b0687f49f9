import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { sql } from '../src/platform/sql.js';
import type { Deployment } from './deployment.js';

export type WorkerKillFigures = {
  readonly killed: string | null;
  readonly bytesHeldAtKill: number;
  readonly readyMs: number | null;
  readonly status: string | null;
  readonly byteSize: number | null;
  readonly checksumMatches: boolean;
  readonly failures: string[];
};

const poll = z.object({ status: z.string(), byteSize: z.number().optional(), checksum: z.string().optional(), downloadUrl: z.string().optional() });

/**
 * A worker is SIGKILLed in the middle of a build: both workers lose S3 (a partition), the export
 * is requested, and the worker whose upload is stuck is killed once the job is `building`. The
 * other worker gets S3 back; the job must still end `ready` with a complete file.
 */
export async function workerKill(deployment: Deployment, readyBoundMs: number): Promise<WorkerKillFigures> {
  const failures: string[] = [];
  const workers = deployment.byRole('worker');
  const api = deployment.byRole('api')[0];
  if (api === undefined) throw new Error('no API process');
  const dropped = new Map(workers.map((w) => [w, w.s3.droppedBytes()]));
  for (const worker of workers) worker.s3.partition();
  const auth = { authorization: `Bearer ${deployment.key}` };
  const posted = await fetch(`${api.base()}/v1/analytics/exports`, { method: 'POST', headers: auth });
  if (posted.status !== 202) throw new Error(`POST /v1/analytics/exports answered ${posted.status}`);
  const { exportId } = z.object({ exportId: z.string() }).parse(await posted.json());

  // Building, and one worker's upload swallowed by the partition: that worker is mid-export.
  const deadline = performance.now() + 30_000;
  let victim: (typeof workers)[number] | undefined;
  while (performance.now() < deadline && victim === undefined) {
    const status = await deployment.pool.maybeOneFirst(sql.type(z.object({ status: z.string() }))`SELECT status FROM export_jobs WHERE export_id = ${exportId}`);
    if (status === 'building') victim = workers.find((w) => w.s3.droppedBytes() > (dropped.get(w) ?? 0));
    if (victim === undefined) await sleep(100);
  }
  const bytesHeldAtKill = victim === undefined ? 0 : victim.s3.droppedBytes() - (dropped.get(victim) ?? 0);
  victim?.child?.kill('SIGKILL');
  if (victim === undefined) failures.push('no worker was caught mid-upload');
  const killedAt = performance.now();
  for (const worker of workers) {
    worker.s3.heal();
    await worker.s3.start();
  }

  let readyMs: number | null = null;
  let last: z.infer<typeof poll> | undefined;
  while (performance.now() - killedAt < readyBoundMs) {
    last = poll.parse(await (await fetch(`${api.base()}/v1/analytics/exports/${exportId}`, { headers: auth })).json());
    if (last.status === 'ready') {
      readyMs = Math.round(performance.now() - killedAt);
      break;
    }
    await sleep(500);
  }
  let checksumMatches = false;
  if (last?.status === 'ready' && last.downloadUrl !== undefined) {
    const bytes = Buffer.from(await (await fetch(last.downloadUrl)).arrayBuffer());
    checksumMatches = bytes.length === last.byteSize && createHash('sha256').update(bytes).digest('hex') === last.checksum;
    if (!checksumMatches) failures.push('the downloaded file does not match byteSize and checksum');
  } else {
    failures.push(`the export did not end ready within ${readyBoundMs} ms (last status ${String(last?.status)})`);
  }
  if (victim !== undefined) await deployment.start(victim);
  return { killed: victim?.name ?? null, bytesHeldAtKill, readyMs, status: last?.status ?? null, byteSize: last?.byteSize ?? null, checksumMatches, failures };
}
