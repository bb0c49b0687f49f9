import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { sql } from '../src/platform/sql.js';
import type { Deployment } from './deployment.js';
import { request, runLoad } from './load.js';

export type RedisDownFigures = {
  readonly reads: number;
  readonly readsOk: number;
  readonly exportPosts: number;
  readonly exportAnswers: Record<string, number>;
  readonly jobsCreated: number;
  readonly postOkAgainMs: number | null;
  readonly failures: string[];
};

const jobCount = sql.type(z.object({ count: z.number().int() }))`SELECT count(*)::int AS count FROM export_jobs`;

/** Redis goes away for every process: reads carry on (the request budget falls back to memory); an export request answers 500 and leaves no job. */
export async function redisDown(deployment: Deployment): Promise<RedisDownFigures> {
  const failures: string[] = [];
  const apis = deployment.byRole('api');
  const jobsBefore = await deployment.pool.oneFirst(jobCount);
  await deployment.redis.stop();
  const downAt = performance.now();
  const stop = new AbortController();
  const reading = runLoad({ bases: apis.map((a) => a.base()), path: '/v1/orders?limit=20', key: deployment.key, clients: 8, stop: stop.signal });
  const exportAnswers: Record<string, number> = {};
  let exportPosts = 0;
  // Past the moment every process has noticed (their clients retry in the background).
  while (performance.now() - downAt < 8_000) {
    for (const api of apis) {
      const answer = await request(`${api.base()}/v1/analytics/exports`, deployment.key, { method: 'POST' });
      exportPosts += 1;
      const label = answer.code === undefined ? String(answer.status) : `${answer.status} ${answer.code}`;
      exportAnswers[label] = (exportAnswers[label] ?? 0) + 1;
    }
    await sleep(500);
  }
  stop.abort();
  const reads = await reading;
  const jobsCreated = (await deployment.pool.oneFirst(jobCount)) - jobsBefore;
  await deployment.redis.start();
  const upAt = performance.now();
  let postOkAgainMs: number | null = null;
  while (performance.now() - upAt < 30_000) {
    const answer = await request(`${apis[0]?.base() ?? ''}/v1/analytics/exports`, deployment.key, { method: 'POST' });
    if (answer.status === 202) {
      postOkAgainMs = Math.round(performance.now() - upAt);
      break;
    }
    await sleep(250);
  }
  const readsOk = reads.filter((r) => r.status === 200).length;
  if (readsOk !== reads.length) failures.push(`${reads.length - readsOk} of ${reads.length} reads failed while Redis was down`);
  const wrong = Object.keys(exportAnswers).filter((label) => label !== '500 common.internal_error');
  if (wrong.length > 0) failures.push(`export requests while Redis was down answered ${JSON.stringify(exportAnswers)}`);
  if (jobsCreated !== 0) failures.push(`${jobsCreated} export jobs were left behind while Redis was down`);
  if (postOkAgainMs === null) failures.push('export requests did not succeed again within 30 s of Redis coming back');
  return { reads: reads.length, readsOk, exportPosts, exportAnswers, jobsCreated, postOkAgainMs, failures };
}
