import { setTimeout as sleep } from 'node:timers/promises';
import type { TcpProxy } from '../test/support/tcpProxy.js';
import { runLoad, type Sample } from './load.js';

/** What a cut needs: the API processes to read from, and the proxies between every process and Postgres. */
export type CutTarget = { readonly apiBases: readonly string[]; readonly proxies: readonly TcpProxy[]; readonly key: string };
export type CutOptions = { readonly clients: number; readonly cutMs: number; readonly mode: 'stop' | 'partition'; readonly warmMs?: number; readonly afterMs?: number };

export type PostgresCutFigures = {
  readonly mode: 'stop' | 'partition';
  readonly clients: number;
  readonly cutMs: number;
  readonly requests: number;
  readonly duringCut: Record<string, number>;
  readonly noAnswer: number;
  readonly slowestMs: number;
  readonly slowestDuringCutMs: number;
  readonly recoveryMs: number | null;
  readonly readyzDuringCut: Record<string, number>;
  readonly readyzAfter: Record<string, number>;
  /** What went wrong: a request unanswered or answered other than allowed, readiness wrong. */
  readonly failures: string[];
  /** Time bounds exceeded (the slowest request, the recovery): the drill fails on them, a test under load does not. */
  readonly overBounds: string[];
};

/** Bound on any one request while the database is away (connection and statement timeouts, plus slack). */
export const requestBoundMs = 17_000;
/** The API must answer 200 again this soon after the database returns. */
export const recoveryBoundMs = 2_000;

/**
 * `clients` clients read `/v1/orders` from both API processes; every process loses Postgres for
 * `cutMs` (connections reset and refused, or a silent partition), then gets it back.
 */
export async function postgresCut(target: CutTarget, options: CutOptions): Promise<PostgresCutFigures> {
  const stop = new AbortController();
  const load = runLoad({ bases: target.apiBases, path: '/v1/orders?limit=50', key: target.key, clients: options.clients, stop: stop.signal });
  const readyz: { at: number; endedAt: number; status: number }[] = [];
  const probing = (async () => {
    while (!stop.signal.aborted) {
      for (const base of target.apiBases) {
        const at = performance.now();
        const status = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.status, () => 0);
        readyz.push({ at, endedAt: performance.now(), status });
      }
      await sleep(250);
    }
  })();
  await sleep(options.warmMs ?? 3_000);
  const cutAt = performance.now();
  for (const proxy of target.proxies) {
    if (options.mode === 'stop') await proxy.stop();
    else proxy.partition();
  }
  await sleep(options.cutMs);
  const backAt = performance.now();
  for (const proxy of target.proxies) {
    if (options.mode === 'partition') proxy.heal();
    await proxy.start();
  }
  await sleep(options.afterMs ?? 10_000);
  stop.abort();
  const samples = await load;
  await probing;
  return summarise(samples, readyz, cutAt, backAt, options);
}

function summarise(
  samples: Sample[],
  readyz: { at: number; endedAt: number; status: number }[],
  cutAt: number,
  backAt: number,
  options: CutOptions,
): PostgresCutFigures {
  const failures: string[] = [];
  const duringCut: Record<string, number> = {};
  for (const sample of samples.filter((s) => s.startedAt >= cutAt && s.startedAt < backAt)) {
    const label = sample.code === undefined ? String(sample.status) : `${sample.status} ${sample.code}`;
    duringCut[label] = (duringCut[label] ?? 0) + 1;
  }
  const noAnswer = samples.filter((s) => s.status === 0).length;
  const slowestMs = Math.round(Math.max(0, ...samples.map((s) => s.endedAt - s.startedAt)));
  const slowestDuringCutMs = Math.round(Math.max(0, ...samples.filter((s) => s.endedAt >= cutAt && s.startedAt < backAt).map((s) => s.endedAt - s.startedAt)));
  // Recovery: from the database's return to the start of the first run of answers that are all 200.
  const after = samples.filter((s) => s.startedAt >= backAt).sort((a, b) => a.startedAt - b.startedAt);
  const lastBad = after.filter((s) => s.status !== 200).at(-1);
  const firstGoodAfterLastBad = lastBad === undefined ? after[0] : after.find((s) => s.startedAt > lastBad.startedAt && s.status === 200);
  const recoveryMs = firstGoodAfterLastBad === undefined ? null : Math.round(Math.max(0, firstGoodAfterLastBad.endedAt - backAt));
  const count = (list: { status: number }[]) => list.reduce<Record<string, number>>((acc, r) => ({ ...acc, [String(r.status)]: (acc[String(r.status)] ?? 0) + 1 }), {});
  // Readiness is given two seconds to notice the cut (its database checks wait that long), and
  // counts only answers given before the database was back.
  const readyzDuringCut = count(readyz.filter((r) => r.at >= cutAt + 2_000 && r.endedAt < backAt));
  const readyzAfter = count(readyz.filter((r) => r.at >= backAt + 3_000));

  if (noAnswer > 0) failures.push(`${noAnswer} requests got no HTTP answer`);
  const overBounds: string[] = [];
  if (slowestMs > requestBoundMs) overBounds.push(`the slowest request took ${slowestMs} ms (bound ${requestBoundMs} ms)`);
  // Refused connections are the database's absence (503); in a silent partition a request may also
  // run out of its deadline while its statement waits for an answer (500, a database too slow).
  const allowed = options.mode === 'stop' ? ['200', '503 common.service_unavailable'] : ['200', '503 common.service_unavailable', '500 common.internal_error'];
  const wrong = Object.keys(duringCut).filter((label) => !allowed.includes(label));
  if (wrong.length > 0) failures.push(`answers during the cut other than ${allowed.join(', ')}: ${wrong.join(', ')}`);
  if (recoveryMs === null) failures.push('no request succeeded after the database was back');
  else if (recoveryMs > recoveryBoundMs) overBounds.push(`recovery took ${String(recoveryMs)} ms (bound ${recoveryBoundMs} ms)`);
  if (Object.keys(readyzDuringCut).some((status) => status !== '503')) failures.push(`/readyz during the cut: ${JSON.stringify(readyzDuringCut)}`);
  if (Object.keys(readyzAfter).some((status) => status !== '200')) failures.push(`/readyz after the cut: ${JSON.stringify(readyzAfter)}`);
  return {
    mode: options.mode,
    clients: options.clients,
    cutMs: options.cutMs,
    requests: samples.length,
    duringCut,
    noAnswer,
    slowestMs,
    slowestDuringCutMs,
    recoveryMs,
    readyzDuringCut,
    readyzAfter,
    failures,
    overBounds,
  };
}
