import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, get, request, type ClientRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { createProgressBar } from '../src/cli/progressBar.js';
import { historyDefaults, startOfUtcDay } from '../src/console/history/historyParams.js';
import { createDatabasePool } from '../src/platform/db.js';
import { sql } from '../src/platform/sql.js';
import {
  createBenchDatabase,
  issueBenchKey,
  note,
  oneOf,
  openBenchStore,
  percentile,
  positiveInteger,
  round,
  seedAndProject,
  startChild,
  stopChild,
  wholeNumber,
  type BenchDatabase,
  historyParamsOf,
  type Child,
} from './benchSupport.js';
import type { BenchResult } from './run.js';

/**
 * Time from requesting a briefing export to the poll that says it is ready, per export queue
 * (in process, and BullMQ on Redis), against the briefing read it is built from, on real Postgres
 * in a database of its own, dropped at the end:
 *
 *   npm run bench -- export [--queue in-process|bullmq|both] [--scale small|medium|large]
 *                           [--rounds 20] [--warmup 3] [--poll-ms 10] [--redis redis://127.0.0.1:6379]
 *                           [--tenants 2] [--days 90] [--seed 7] [--as-of YYYY-MM-DD] [--cpu-prof DIR]
 *
 * Setup (not measured): migrate, append the console's seed history (`large` by default: about
 * 1 000 000 events in all), rebuild every projection to the head of the log, VACUUM ANALYZE, and
 * issue a key holding only `analytics:read` for the first tenant's owner. The history ends by
 * default at the start of the current UTC day, so that the weekly briefing's window (today and the
 * six days before it) holds data. With BullMQ among the queues, Redis (`--redis`, else REDIS_URL,
 * else redis://127.0.0.1:6379) must answer PING before anything else is done.
 *
 * Then per queue, one after the other on the same database, the real API as a child process
 * (`serve --roles api,worker`: it builds the exports itself, in process without REDIS_URL, or as
 * the BullMQ consumer of its own queue with it), with its own temporary DATA_DIR (local files,
 * S3 settings blanked), a queue name of its own (EXPORT_QUEUE_NAME, so that no other worker takes
 * its jobs; removed from Redis afterwards), LOG_LEVEL=warn and the request budget raised to
 * 1 000 000 a minute. `--warmup` rounds discarded, then `--rounds` measured, each round one export
 * and one briefing read (which goes first alternates every round), sequentially:
 *   - export: POST /v1/analytics/exports {"period":"weekly"} (202), then, `--poll-ms` after each
 *     answer that is not `ready` (the 202 included), GET /v1/analytics/exports/{exportId}. The time
 *     runs from sending the POST to the last byte of the poll answer saying `ready`
 *     (performance.now()); the number of polls is recorded. A `failed` job, or none ready within
 *     60 s, is a failure.
 *   - download (not in the time above): the answer's `downloadUrl` with a plain GET and no header;
 *     it must be a 2xx whose body has the job's `byteSize` and SHA-256 `checksum`.
 *   - baseline: GET /v1/analytics/briefing?period=weekly, the computation the file is made from,
 *     from sending the request to the last byte of the answer.
 * The API requests share one keep-alive connection, the downloads another (the link names
 * `localhost`). Any failed request or mismatching file makes the bench fail (exit code 1) after
 * printing.
 *
 * Figures per queue: export p50/p95/max, briefing p50/p95 (ms), the file's bytes and figure rows,
 * and to see where the time goes: polls per export (p50, max), the POST's own p50, the server's
 * requested_at → ready_at p50 (from the job rows), the mean build time (the API's
 * supply_export_build_seconds metric over the measured rounds: briefing, CSV, file, job update) and
 * the download p50. `ratio`: export p50 over briefing p50, the worse of the queues. Targets: export
 * p50 ≤ 2 s, and (reported alike) p95 ≤ 2 s, on every queue measured.
 */

const queueModes = ['in-process', 'bullmq'] as const;
type QueueMode = (typeof queueModes)[number];

/** The largest RATE_LIMIT_PER_MINUTE the configuration accepts (src/config/config.ts). */
const raisedBudgetPerMinute = 1_000_000;
/** A request that takes longer than this is a failure. */
const requestTimeoutMs = 30_000;
/** An export not ready this long after its POST is a failure. */
const exportTimeoutMs = 60_000;
const target = { postToReadyP50Ms: 2000, postToReadyP95Ms: 2000 };

const exportPath = '/v1/analytics/exports';
const briefingPath = '/v1/analytics/briefing?period=weekly';
const exportBody = JSON.stringify({ period: 'weekly' });

type Options = {
  readonly rounds: number;
  readonly warmup: number;
  readonly pollMs: number;
  readonly redisUrl: string;
  readonly cpuProfDir: string | undefined;
};

type ModeRun = {
  readonly exportMs: Float64Array;
  readonly briefingMs: Float64Array;
  readonly postMs: Float64Array;
  readonly downloadMs: Float64Array;
  readonly serverMs: Float64Array;
  readonly polls: Float64Array;
  readonly buildMeanMs: number | undefined;
  readonly fileBytes: number;
  readonly figureRows: number;
  readonly failures: readonly string[];
};

export async function run(args: readonly string[]): Promise<BenchResult> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      queue: { type: 'string', default: 'both' },
      scale: { type: 'string', default: 'large' },
      rounds: { type: 'string', default: '20' },
      warmup: { type: 'string', default: '3' },
      'poll-ms': { type: 'string', default: '10' },
      redis: { type: 'string', default: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' },
      tenants: { type: 'string', default: String(historyDefaults.tenants) },
      days: { type: 'string', default: String(historyDefaults.days) },
      seed: { type: 'string', default: '7' },
      'as-of': { type: 'string', default: startOfUtcDay(new Date()).toISOString().slice(0, 10) },
      'cpu-prof': { type: 'string' },
    },
  });
  const queue = oneOf('queue', values.queue, [...queueModes, 'both'] as const);
  const modes: readonly QueueMode[] = queue === 'both' ? queueModes : [queue];
  const options: Options = {
    rounds: positiveInteger('rounds', values.rounds),
    warmup: wholeNumber('warmup', values.warmup),
    pollMs: wholeNumber('poll-ms', values['poll-ms']),
    redisUrl: redisUrlOf(values.redis),
    cpuProfDir: values['cpu-prof'],
  };
  const params = historyParamsOf(values);
  // Before the minutes of seeding: a bench that cannot reach Redis should say so at once.
  if (modes.includes('bullmq')) await checkRedis(options.redisUrl);

  const started = performance.now();
  note(`\n== ${params.scale} seed, queues: ${modes.join(', ')} ==`);
  const database = await createBenchDatabase();
  const children = new Set<Child>();
  // The API must not outlive the bench, whatever ends it.
  const killAll = (): void => {
    for (const child of children) child.process.kill('SIGKILL');
  };
  process.once('exit', killAll);
  const runs = new Map<QueueMode, ModeRun>();
  let prepared: { readonly key: string; readonly tenantId: string; readonly events: number; readonly seedSeconds: number; readonly projectSeconds: number };
  try {
    const setup = await openBenchStore(database);
    try {
      const seeded = await seedAndProject(database, setup, params);
      const tenant = seeded.summary.tenants[0];
      if (tenant === undefined) throw new Error('the seed has no tenant');
      const issued = await issueBenchKey(setup, tenant, ['analytics:read']);
      note(`tenant ${tenant.workspaceId}: key ${issued.prefix}… holding ${issued.scopes.join(', ')}`);
      prepared = { key: issued.key, tenantId: tenant.workspaceId, events: seeded.events, seedSeconds: seeded.seedSeconds, projectSeconds: seeded.projectSeconds };
    } finally {
      await setup.close();
    }
    for (const mode of modes) runs.set(mode, await benchMode(mode, database, children, prepared, options));
  } finally {
    for (const child of [...children]) await stopChild(children, child).catch(() => undefined);
    process.off('exit', killAll);
    await database.drop();
  }
  const runSeconds = round((performance.now() - started) / 1000, 1);

  const ms = (values: Float64Array, fraction: number): number => round(percentile(values, fraction), 2);
  const ratioOf = (modeRun: ModeRun): number | undefined => {
    const briefing = percentile(modeRun.briefingMs, 0.5);
    return modeRun.exportMs.length === 0 || briefing === 0 ? undefined : round(percentile(modeRun.exportMs, 0.5) / briefing, 2);
  };
  const figuresOf = (modeRun: ModeRun): Record<string, number> => {
    const ratio = ratioOf(modeRun);
    return {
      exportP50Ms: ms(modeRun.exportMs, 0.5),
      exportP95Ms: ms(modeRun.exportMs, 0.95),
      exportMaxMs: ms(modeRun.exportMs, 1),
      briefingP50Ms: ms(modeRun.briefingMs, 0.5),
      briefingP95Ms: ms(modeRun.briefingMs, 0.95),
      fileBytes: modeRun.fileBytes,
      figures: modeRun.figureRows,
      pollsP50: percentile(modeRun.polls, 0.5),
      pollsMax: percentile(modeRun.polls, 1),
      postP50Ms: ms(modeRun.postMs, 0.5),
      serverRequestToReadyP50Ms: ms(modeRun.serverMs, 0.5),
      ...(modeRun.buildMeanMs === undefined ? {} : { buildMeanMs: round(modeRun.buildMeanMs, 2) }),
      downloadP50Ms: ms(modeRun.downloadMs, 0.5),
      ...(ratio === undefined ? {} : { exportToBriefing: ratio }),
    };
  };
  const measured = modes.flatMap((mode) => {
    const modeRun = runs.get(mode);
    return modeRun === undefined ? [] : [[mode, modeRun] as const];
  });
  const ratios = measured.map(([, modeRun]) => ratioOf(modeRun)).filter((r): r is number => r !== undefined);
  const ratio = ratios.length === 0 ? undefined : Math.max(...ratios);
  // A queue with no export measured cannot meet a target.
  const worst = (fraction: number): number =>
    Math.max(...measured.map(([, modeRun]) => (modeRun.exportMs.length === 0 ? Number.POSITIVE_INFINITY : percentile(modeRun.exportMs, fraction))));
  const failures = measured.flatMap(([mode, modeRun]) => modeRun.failures.map((failure) => `${mode}: ${failure}`));

  note(`run took ${runSeconds} s${runSeconds > 600 ? ' (more than the 10 minutes it should take)' : ''}`);
  return {
    bench: 'export',
    figures: {
      ...Object.fromEntries(measured.map(([mode, modeRun]) => [mode, figuresOf(modeRun)])),
      events: prepared.events,
      seedSeconds: round(prepared.seedSeconds, 1),
      projectSeconds: round(prepared.projectSeconds, 1),
      rounds: options.rounds,
      pollMs: options.pollMs,
      runSeconds,
    },
    ...(ratio === undefined ? {} : { ratio }),
    target,
    pass: {
      postToReadyP50: worst(0.5) <= target.postToReadyP50Ms,
      postToReadyP95: worst(0.95) <= target.postToReadyP95Ms,
    },
    ...(failures.length === 0 ? {} : { failure: failures.join('; ') }),
  };
}

// ---------------------------------------------------------------------------------------------
// One queue mode: its API process, its measurement.

async function benchMode(
  mode: QueueMode,
  database: BenchDatabase,
  children: Set<Child>,
  prepared: { readonly key: string; readonly tenantId: string },
  options: Options,
): Promise<ModeRun> {
  note(`\n== queue ${mode} ==`);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'supply-bench-export-'));
  const queueName = `supply-bench-export-${randomBytes(5).toString('hex')}`;
  let api: Child | undefined;
  try {
    api = await startChild(
      children,
      `api ${mode}`,
      ['bin/supply-api.js', 'serve', '--roles', 'api,worker'],
      {
        DATABASE_URL: database.connectionUri,
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_MINUTE: String(raisedBudgetPerMinute),
        DATA_DIR: dataDir,
        EXPORT_QUEUE_NAME: queueName,
        // Local files whatever our environment says; the service's default build concurrency.
        S3_BUCKET: '',
        S3_ENDPOINT: '',
        S3_FORCE_PATH_STYLE: '',
        EXPORT_CONCURRENCY: '',
        ...(mode === 'bullmq' ? { REDIS_URL: options.redisUrl } : {}),
      },
      options.cpuProfDir,
    );
    note(`api pid ${api.process.pid} on ${api.baseUrl}, DATA_DIR ${dataDir}, queue ${mode === 'bullmq' ? `${queueName} on ${options.redisUrl}` : 'in process'}`);
    const measured = await measure(api, prepared.key, options);

    // Where the time went, read after the rounds (not during them): the server's own timestamps.
    const pool = await createDatabasePool(database.connectionUri, 1);
    let serverMs: Float64Array;
    try {
      const rows = await pool.anyFirst(sql.type(z.object({ ms: z.number() }))`
        SELECT (extract(epoch FROM ready_at - requested_at) * 1000)::float8 AS ms FROM export_jobs
        WHERE tenant_id = ${prepared.tenantId} AND export_id = ANY(${sql.array(measured.exportIds, 'text')}) AND ready_at IS NOT NULL
      `);
      serverMs = Float64Array.from(rows).sort();
    } finally {
      await pool.end();
    }
    const p = (values: Float64Array, fraction: number): string => round(percentile(values, fraction), 1).toFixed(1);
    note(
      `${mode}: export p50 ${p(measured.exportMs, 0.5)} p95 ${p(measured.exportMs, 0.95)} max ${p(measured.exportMs, 1)} ms ` +
        `(polls p50 ${percentile(measured.polls, 0.5)}, POST p50 ${p(measured.postMs, 0.5)} ms, server requested→ready p50 ${p(serverMs, 0.5)} ms, ` +
        `build mean ${measured.buildMeanMs === undefined ? '?' : measured.buildMeanMs.toFixed(1)} ms) | briefing p50 ${p(measured.briefingMs, 0.5)} ` +
        `p95 ${p(measured.briefingMs, 0.95)} ms | download p50 ${p(measured.downloadMs, 0.5)} ms, ${measured.fileBytes} bytes, ${measured.figureRows} rows`,
    );
    return { ...measured, serverMs };
  } finally {
    if (api !== undefined) await stopChild(children, api).catch(() => undefined);
    if (mode === 'bullmq') await removeQueue(options.redisUrl, queueName).catch((error: unknown) => note(`could not remove queue ${queueName}: ${String(error)}`));
    await rm(dataDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Measurement: sequential rounds, the API requests over one keep-alive connection.

type Answer = { readonly status: number; readonly body: Buffer; readonly ms: number };

const acceptedAnswer = z.object({ exportId: z.string(), status: z.literal('pending'), reportType: z.literal('briefing'), period: z.literal('weekly') });
const jobAnswer = z.object({
  status: z.enum(['pending', 'building', 'ready', 'failed']),
  error: z.string().optional(),
  byteSize: z.number().optional(),
  checksum: z.string().optional(),
  downloadUrl: z.string().optional(),
});
const briefingAnswer = z.object({ figures: z.array(z.unknown()) });

/** Reads a whole answer; the time runs from `started` to its last byte. */
function collect(req: ClientRequest, started: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.setTimeout(requestTimeoutMs, () => req.destroy(new Error(`no answer within ${requestTimeoutMs} ms`)));
  });
}

async function measure(
  api: Child,
  key: string,
  { rounds, warmup, pollMs }: Options,
): Promise<Omit<ModeRun, 'serverMs'> & { readonly exportIds: readonly string[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const downloads = new Agent({ keepAlive: true, maxSockets: 1 });
  const apiSockets = new Set<Socket>();
  const downloadSockets = new Set<Socket>();
  const url = new URL(api.baseUrl);
  const headers = { authorization: `Bearer ${key}`, 'accept-language': 'en' };
  const call = (method: 'GET' | 'POST', requestPath: string, body?: string): Promise<Answer> => {
    const started = performance.now();
    const req = request({
      host: url.hostname,
      port: url.port,
      method,
      path: requestPath,
      agent,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
    });
    req.on('socket', (socket) => apiSockets.add(socket));
    const answer = collect(req, started);
    req.end(body);
    return answer;
  };
  // A plain GET: no key, no header of ours.
  const download = (link: string): Promise<Answer> => {
    const started = performance.now();
    const req = get(link, { agent: downloads });
    req.on('socket', (socket) => downloadSockets.add(socket));
    return collect(req, started);
  };
  const refused = (what: string, answer: Answer): Error =>
    new Error(`${what}: ${answer.status} ${answer.body.toString('utf8').slice(0, 200)}`);

  const exportMs: number[] = [];
  const briefingMs: number[] = [];
  const postMs: number[] = [];
  const downloadMs: number[] = [];
  const polls: number[] = [];
  const exportIds: string[] = [];
  const fileBytes = new Set<number>();
  const figureRows = new Set<number>();
  const briefingFigures = new Set<number>();
  const bad = new Map<string, number>();
  const fail = (failure: string): void => void bad.set(failure, (bad.get(failure) ?? 0) + 1);

  const exportOnce = async (measured: boolean): Promise<void> => {
    const started = performance.now();
    const posted = await call('POST', exportPath, exportBody);
    if (posted.status !== 202) throw refused('POST export', posted);
    const accepted = acceptedAnswer.parse(JSON.parse(posted.body.toString('utf8')));
    let pollCount = 0;
    let ready: z.infer<typeof jobAnswer> | undefined;
    let readyAt = 0;
    while (ready === undefined) {
      if (performance.now() - started > exportTimeoutMs) throw new Error(`export not ready within ${exportTimeoutMs} ms`);
      await sleep(pollMs);
      const polled = await call('GET', `${exportPath}/${accepted.exportId}`);
      pollCount += 1;
      if (polled.status !== 200) throw refused('poll export', polled);
      const job = jobAnswer.parse(JSON.parse(polled.body.toString('utf8')));
      if (job.status === 'failed') throw new Error(`export failed (${job.error ?? 'no error given'})`);
      if (job.status === 'ready') {
        ready = job;
        readyAt = performance.now();
      }
    }
    const elapsed = readyAt - started;
    const { byteSize, checksum, downloadUrl } = ready;
    if (byteSize === undefined || checksum === undefined || downloadUrl === undefined) throw new Error(`a ready export lacks byteSize, checksum or downloadUrl`);
    const file = await download(downloadUrl);
    if (file.status < 200 || file.status >= 300) throw refused('download', file);
    const sha256 = createHash('sha256').update(file.body).digest('hex');
    if (file.body.length !== byteSize) throw new Error(`downloaded ${file.body.length} bytes, the job says byteSize ${byteSize}`);
    if (sha256 !== checksum) throw new Error(`downloaded file has SHA-256 ${sha256}, the job says checksum ${checksum}`);
    fileBytes.add(byteSize);
    figureRows.add(csvRows(file.body) - 1);
    if (!measured) return;
    exportMs.push(elapsed);
    postMs.push(posted.ms);
    downloadMs.push(file.ms);
    polls.push(pollCount);
    exportIds.push(accepted.exportId);
  };
  const briefingOnce = async (measured: boolean): Promise<void> => {
    const answer = await call('GET', briefingPath);
    if (answer.status !== 200) throw refused('briefing', answer);
    briefingFigures.add(briefingAnswer.parse(JSON.parse(answer.body.toString('utf8'))).figures.length);
    if (measured) briefingMs.push(answer.ms);
  };

  const buildsBefore = { sum: 0, count: 0 };
  const bar = createProgressBar(`exports (${api.name})`, 'rounds', true);
  bar.start(warmup + rounds);
  try {
    for (let round = 0; round < warmup + rounds; round += 1) {
      if (api.process.exitCode !== null || api.process.signalCode !== null) {
        fail(`the API exited (${api.process.exitCode ?? api.process.signalCode}) in round ${round + 1}`);
        break;
      }
      if (round === warmup) Object.assign(buildsBefore, await buildSeconds(api.baseUrl));
      const measured = round >= warmup;
      // Which goes first alternates, so that what one leaves warm helps both alike.
      const steps = [['export', exportOnce], ['briefing', briefingOnce]] as const;
      for (const [name, step] of round % 2 === 0 ? steps : [...steps].reverse()) {
        try {
          await step(measured);
        } catch (error) {
          // A failed step records no time; the round goes on.
          fail(`${name}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
      bar.update(round + 1);
    }
  } finally {
    bar.stop();
    agent.destroy();
    downloads.destroy();
  }
  const buildsAfter = await buildSeconds(api.baseUrl).catch(() => undefined);
  const builds = buildsAfter === undefined ? 0 : buildsAfter.count - buildsBefore.count;
  const buildMeanMs = buildsAfter === undefined || builds <= 0 ? undefined : ((buildsAfter.sum - buildsBefore.sum) / builds) * 1000;

  if (apiSockets.size !== 1) note(`!!! the API requests used ${apiSockets.size} connections, not one (keep-alive broken?)`);
  if (downloadSockets.size > 1) note(`!!! the downloads used ${downloadSockets.size} connections, not one (keep-alive broken?)`);
  if (fileBytes.size > 1) note(`  note: the files did not all have the same size: ${[...fileBytes].join(', ')} bytes`);
  if (figureRows.size > 1 || briefingFigures.size > 1 || (figureRows.size === 1 && [...figureRows][0] !== [...briefingFigures][0])) {
    note(`  note: figure rows differ: files ${[...figureRows].join(', ')}, briefing answers ${[...briefingFigures].join(', ')}`);
  }
  const failures = [...bad].map(([failure, count]) => `${count}× ${failure}`);
  for (const failure of failures) note(`!!! ${failure}`);
  const sorted = (values: readonly number[]): Float64Array => Float64Array.from(values).sort();
  return {
    exportMs: sorted(exportMs),
    briefingMs: sorted(briefingMs),
    postMs: sorted(postMs),
    downloadMs: sorted(downloadMs),
    polls: sorted(polls),
    buildMeanMs,
    fileBytes: fileBytes.size === 0 ? 0 : Math.max(...fileBytes),
    figureRows: figureRows.size === 0 ? 0 : Math.max(...figureRows),
    failures,
    exportIds,
  };
}

/** Lines of a CSV (CRLF outside quotes), the header included. */
function csvRows(bytes: Buffer): number {
  const text = bytes.toString('utf8');
  let rows = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (char === '"') quoted = !quoted;
    else if (char === '\n' && !quoted) rows += 1;
  }
  return rows;
}

/** The API's successful build time so far (its supply_export_build_seconds histogram, outcome ready). */
async function buildSeconds(baseUrl: string): Promise<{ sum: number; count: number }> {
  const response = await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(requestTimeoutMs) });
  const text = await response.text();
  const value = (name: string): number => {
    const match = new RegExp(`^${name}\\{outcome="ready"\\} (\\S+)$`, 'm').exec(text);
    return match?.[1] === undefined ? 0 : Number(match[1]);
  };
  return { sum: value('supply_export_build_seconds_sum'), count: value('supply_export_build_seconds_count') };
}

// ---------------------------------------------------------------------------------------------
// Redis.

function redisUrlOf(value: string | undefined): string {
  if (value === undefined || !URL.canParse(value) || !['redis:', 'rediss:'].includes(new URL(value).protocol)) {
    throw new Error(`--redis must be a redis:// or rediss:// URL, got ${value}`);
  }
  return value;
}

/** PING within 3 s, or an error saying what to do. */
async function checkRedis(redisUrl: string): Promise<void> {
  const client = new Redis(redisUrl, { lazyConnect: true, connectTimeout: 3000, commandTimeout: 3000, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  // The connection's own error (say ECONNREFUSED) says more than the "Connection is closed" that connect() rejects with.
  let connectionError: Error | undefined;
  client.on('error', (error: Error) => {
    connectionError ??= error;
  });
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    const reason = connectionError ?? error;
    throw new Error(
      `the bullmq queue needs Redis, and ${redisUrl} does not answer (${reason instanceof Error ? reason.message : String(reason)}): ` +
        'start it, pass --redis URL, or measure only --queue in-process',
    );
  } finally {
    client.disconnect();
  }
}

/** Removes the bench's BullMQ queue (its finished jobs would otherwise stay a day). */
async function removeQueue(redisUrl: string, queueName: string): Promise<void> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  connection.on('error', () => undefined);
  const queue = new Queue(queueName, { connection });
  try {
    await queue.obliterate({ force: true });
  } finally {
    await queue.close();
    connection.disconnect();
  }
}
