import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import pg from 'pg';
import { z } from 'zod';
import type { HistoryParams } from '../src/console/history/historyParams.js';
import type { TenantSummary } from '../src/console/seedSummary.js';
import { issuableScopes } from '../src/keys/scopes.js';
import { sql } from '../src/platform/sql.js';
import {
  clockTicksPerSecond,
  createBenchDatabase,
  issueBenchKey,
  megabytes,
  note,
  oneOf,
  openBenchStore,
  percentile,
  positiveInteger,
  processCpuSeconds,
  processRss,
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
import { startStandbyCluster } from '../test/support/standbyCluster.js';

/**
 * Throughput, latency and memory of the real API process against a bare node:http + pg yardstick,
 * on real Postgres in a database of its own that is dropped at the end:
 *
 *   npm run bench -- api [--seconds 10] [--rounds 5] [--warmup 2] [--connections 32]
 *                        [--scale medium] [--tenants 1] [--days 90] [--seed 7] [--as-of 2026-01-05]
 *                        [--order-ids 300] [--only ordersList,orderById,balances]
 *                        [--redis redis://127.0.0.1:6379] [--cpu-prof DIR] [--skip-tx-probe] [--replica]
 *
 * Setup (not measured): compile dist/ (bin/build.js, as `npm install` does, so the API runs
 * compiled JavaScript as in production), migrate, seed the console history, rebuild every projection
 * (replayProjections), VACUUM ANALYZE, issue a key holding every issuable scope for the first
 * tenant's owner.
 *
 * Then two child processes, so that each one's RSS and CPU are its own:
 *   - the API: `node bin/supply-api.js serve --roles api` (LOG_LEVEL=warn; the request budget
 *     raised to 1 000 000 a minute, the most RATE_LIMIT_PER_MINUTE accepts; in memory; the api role
 *     runs no projector, the data is projected already);
 *   - the baseline (bench/apiBaseline.ts): node:http + pg.Pool(10) running the same SELECT text,
 *     JSON.stringify in the same envelope; no auth, budget, validation or logging.
 * Both must first give the same data for each URL. Then per endpoint, autocannon with
 * `--connections` connections: `--warmup` s on each server (discarded), then `--seconds` s on each,
 * measured in `--rounds` alternating slices (API, baseline, baseline, API, …, with a pause after each
 * so that requests still queued do not spill into the next), so that both see the same load from
 * whatever else runs on the machine:
 *   GET /v1/orders?limit=50, GET /v1/orders/{id} (round-robin over `--order-ids` real ids of the
 *   tenant), GET /v1/inventory/balances?limit=200; the Authorization header is sent to both.
 * Latency percentiles are taken from every 2xx response's own time (autocannon's histogram is in
 * whole ms). RSS of each child is read from /proc every 200 ms; CPU per request of each child, of
 * the bench database's Postgres backends and of this process (the load generator) from /proc.
 *
 * With --replica, the bench database lives on a primary and hot standby of the bench's own
 * (test/support/standbyCluster.ts: initdb, pg_basebackup -R, pg_ctl as the postgres user), and a
 * third child, the API with READ_DATABASE_URL naming the standby, is measured in the same
 * interleaved slices: each endpoint's `standbyRatio` (its req/s over the baseline's, which reads
 * the primary) beside `ratio` (the API on the primary), and `standbyToPrimary`, their quotient
 * (target ≥ 0.9: reading from a standby costs at most 10 %). Postgres CPU per request counts the
 * backends of both servers.
 *
 * With --redis URL, the API is also started with REDIS_URL (request budget in Redis) and measured
 * against the in-memory one the same way; with --cpu-prof DIR the API child writes a V8 CPU
 * profile there when it stops.
 *
 * Any non-2xx answer, connection error or timeout fails the bench (exit code 1) after printing.
 *
 * The transaction probe (skip with --skip-tx-probe) counts the Postgres transactions one request
 * costs on each server: 100 sequential requests per endpoint, with pg_stat_database.xact_commit
 * read from another database before and after, each time once the bench database's backends have
 * flushed their statistics (PG flushes an idle backend's counters after 10 s; ~35 s in all).
 */

const endpoints = ['ordersList', 'orderById', 'balances'] as const;
type Endpoint = (typeof endpoints)[number];

/** The largest RATE_LIMIT_PER_MINUTE the configuration accepts (src/config/config.ts). */
const raisedBudgetPerMinute = 1_000_000;
/** Pause after each slice, unmeasured, so that requests the server still has queued finish first. */
const slicePauseMs = 500;

export async function run(args: readonly string[]): Promise<BenchResult> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      seconds: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '32' },
      scale: { type: 'string', default: 'medium' },
      tenants: { type: 'string', default: '1' },
      days: { type: 'string', default: '90' },
      seed: { type: 'string', default: '7' },
      'as-of': { type: 'string', default: '2026-01-05' },
      'order-ids': { type: 'string', default: '300' },
      only: { type: 'string', default: endpoints.join(',') },
      redis: { type: 'string' },
      'cpu-prof': { type: 'string' },
      'skip-tx-probe': { type: 'boolean', default: false },
      replica: { type: 'boolean', default: false },
    },
  });
  const params = historyParamsOf(values);
  const load: LoadShape = {
    seconds: positiveInteger('seconds', values.seconds),
    rounds: positiveInteger('rounds', values.rounds),
    warmupSeconds: wholeNumber('warmup', values.warmup),
    connections: positiveInteger('connections', values.connections),
  };
  const orderIdCount = positiveInteger('order-ids', values['order-ids']);
  const measured = values.only.split(',').map((name) => oneOf('only', name.trim(), endpoints));
  const redisUrl = values.redis;

  execFileSync(process.execPath, ['bin/build.js'], { stdio: 'inherit' });
  // With --replica, the bench database is created on a primary of the bench's own, which a hot standby follows.
  const cluster = values.replica ? await startStandbyCluster({ log: note }) : undefined;
  if (cluster !== undefined) process.env.DATABASE_URL = cluster.primaryAdminUrl;
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const database = await createBenchDatabase().catch(async (error: unknown) => {
    await cluster?.close();
    throw error;
  });
  const children = new Set<Child>();
  // Children must not outlive the bench, whatever ends it.
  const killAll = (): void => {
    for (const child of children) child.process.kill('SIGKILL');
  };
  process.once('exit', killAll);
  let stats: pg.Client | undefined;
  let standbyStats: pg.Client | undefined;
  try {
    const data = await prepareData(database, params, orderIdCount);
    stats = new pg.Client({ connectionString: adminUrl });
    await stats.connect();
    let backends = postgresBackends(stats, database.name);
    if (cluster !== undefined) {
      standbyStats = new pg.Client({ connectionString: cluster.standbyAdminUrl });
      await standbyStats.connect();
      backends = bothBackends(backends, postgresBackends(standbyStats, database.name));
    }

    const apiArgv = ['bin/supply-api.js', 'serve', '--roles', 'api'];
    const apiEnv = { DATABASE_URL: database.connectionUri, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: String(raisedBudgetPerMinute) };
    const api = await startChild(children, 'api', apiArgv, apiEnv, values['cpu-prof']);
    const baseline = await startChild(children, 'baseline', ['bin/run-ts.js', 'bench/apiBaseline.ts'], {
      DATABASE_URL: database.connectionUri,
      BENCH_TENANT_ID: data.tenant.workspaceId,
    });
    const paths = requestPaths(data.orderIds);
    const headers = { authorization: `Bearer ${data.key}` };
    await checkSameAnswers(api, baseline, paths, headers);
    let apiStandby: Child | undefined;
    if (cluster !== undefined) {
      await cluster.caughtUp(120_000);
      const standbyUri = new URL(database.connectionUri);
      standbyUri.port = new URL(cluster.standbyUrl).port;
      apiStandby = await startChild(children, 'api-standby', apiArgv, { ...apiEnv, READ_DATABASE_URL: standbyUri.toString() });
      await standbyInUse(apiStandby);
      await checkSameAnswers(apiStandby, baseline, paths, headers);
      note(`api-standby pid ${apiStandby.process.pid} reads from the hot standby ${standbyUri.host}; same data for every URL`);
    }
    const apiIdleRss = await rssOf(api);
    const baselineIdleRss = await rssOf(baseline);
    note(
      `api pid ${api.process.pid} (rss ${megabytes(apiIdleRss)} MB idle), baseline pid ${baseline.process.pid} ` +
        `(rss ${megabytes(baselineIdleRss)} MB idle); same data for every URL`,
    );

    const context: MeasureContext = { headers, load, backends };
    const apiRss = sampleRss(api);
    const baselineRss = sampleRss(baseline);
    const runs = new Map<Endpoint, { api: Measured; baseline: Measured; standby?: Measured; redis?: { memory: Measured; redis: Measured } }>();
    const runOf = (endpoint: Endpoint) => {
      const found = runs.get(endpoint);
      if (found === undefined) throw new Error(`no run of ${endpoint}`);
      return found;
    };
    let apiHeapTotalPeak = 0;
    for (const endpoint of measured) {
      const [apiRun, baselineRun, standbyRun] = await measureInterleaved(endpoint, [api, baseline, ...(apiStandby === undefined ? [] : [apiStandby])], paths[endpoint], context);
      if (apiRun === undefined || baselineRun === undefined) throw new Error('a run is missing');
      runs.set(endpoint, { api: apiRun, baseline: baselineRun, ...(standbyRun === undefined ? {} : { standby: standbyRun }) });
      if (standbyRun !== undefined) {
        note(
          `${''.padEnd(10)} api-standby ${standbyRun.rps} req/s p50 ${standbyRun.p50Ms} p99 ${standbyRun.p99Ms} ms | ` +
            `cpu/req ${standbyRun.cpuUsPerRequest} µs + pg ${standbyRun.postgresCpuUsPerRequest} µs | ` +
            `ratio ${round(standbyRun.rps / baselineRun.rps, 3)}, ${round(standbyRun.rps / apiRun.rps, 3)} of the API on the primary`,
        );
      }
      const heap = await heapOf(api);
      apiHeapTotalPeak = Math.max(apiHeapTotalPeak, heap.total);
      note(
        `${endpoint.padEnd(10)} api ${apiRun.rps} req/s p50 ${apiRun.p50Ms} p99 ${apiRun.p99Ms} ms, cpu/req ${apiRun.cpuUsPerRequest} µs + pg ${apiRun.postgresCpuUsPerRequest} µs | ` +
          `baseline ${baselineRun.rps} req/s p50 ${baselineRun.p50Ms} p99 ${baselineRun.p99Ms} ms, cpu/req ${baselineRun.cpuUsPerRequest} µs + pg ${baselineRun.postgresCpuUsPerRequest} µs | ` +
          `ratio ${round(apiRun.rps / baselineRun.rps, 3)}`,
      );
      note(`${''.padEnd(10)} api rss ${megabytes(await rssOf(api))} MB, V8 heap ${megabytes(heap.used)} MB used of ${megabytes(heap.total)} MB`);
    }
    const apiPeakRss = apiRss.stop();
    const baselinePeakRss = baselineRss.stop();

    let probe: { api: number; baseline: number } | undefined;
    if (!values['skip-tx-probe']) probe = await transactionProbe(transactionCounter(stats, database.name), api, baseline, paths, headers);

    let redisPeakRss: number | undefined;
    if (redisUrl !== undefined) {
      if (await redisAnswers(redisUrl)) {
        const apiRedis = await startChild(children, 'api-redis', apiArgv, { ...apiEnv, REDIS_URL: redisUrl });
        const rss = sampleRss(apiRedis);
        for (const endpoint of measured) {
          const [memory, redis] = await measureInterleaved(endpoint, [api, apiRedis], paths[endpoint], context);
          if (memory === undefined || redis === undefined) throw new Error('a run is missing');
          runOf(endpoint).redis = { memory, redis };
          note(`${endpoint.padEnd(10)} api, budget in Redis: ${redis.rps} req/s p99 ${redis.p99Ms} ms | budget in memory: ${memory.rps} req/s p99 ${memory.p99Ms} ms`);
        }
        redisPeakRss = rss.stop();
      } else {
        note(`!!! Redis at ${redisUrl} does not answer PING: the Redis run is skipped`);
      }
    }

    const figuresOf = (endpoint: Endpoint): Record<string, number> => {
      const { api: a, baseline: b, redis, standby } = runOf(endpoint);
      return {
        ...(standby === undefined
          ? {}
          : {
              standbyRps: standby.rps,
              standbyRatio: round(standby.rps / b.rps, 3),
              standbyToPrimary: round(standby.rps / a.rps, 3),
              standbyP50Ms: standby.p50Ms,
              standbyP99Ms: standby.p99Ms,
              standbyCpuUsPerReq: standby.cpuUsPerRequest,
              standbyPgCpuUsPerReq: standby.postgresCpuUsPerRequest,
              standbyRunMachineBusyPct: standby.machineBusyPct,
            }),
        apiRps: a.rps,
        baselineRps: b.rps,
        ratio: round(a.rps / b.rps, 3),
        apiP50Ms: a.p50Ms,
        apiP99Ms: a.p99Ms,
        baselineP50Ms: b.p50Ms,
        baselineP99Ms: b.p99Ms,
        // CPU per request of each server process and of the bench database's Postgres backends.
        apiCpuUsPerReq: a.cpuUsPerRequest,
        baselineCpuUsPerReq: b.cpuUsPerRequest,
        apiPgCpuUsPerReq: a.postgresCpuUsPerRequest,
        baselinePgCpuUsPerReq: b.postgresCpuUsPerRequest,
        loadGenCpuUsPerReq: a.loadGenCpuUsPerRequest,
        // How busy the cores were during the API's slices (everything on the machine counts).
        apiRunMachineBusyPct: a.machineBusyPct,
        apiBytesPerResponse: a.bytesPerResponse,
        ...(redis === undefined
          ? {}
          : { apiRedisRps: redis.redis.rps, apiRedisP99Ms: redis.redis.p99Ms, redisToMemoryRatio: round(redis.redis.rps / redis.memory.rps, 3) }),
      };
    };
    const perEndpoint = Object.fromEntries(measured.map((endpoint) => [endpoint, figuresOf(endpoint)]));
    const ratio = Math.min(...measured.map((endpoint) => round(runOf(endpoint).api.rps / runOf(endpoint).baseline.rps, 3)));
    const apiWorstP99Ms = Math.max(...measured.map((endpoint) => runOf(endpoint).api.p99Ms));
    const apiPeakRssMb = megabytes(apiPeakRss);
    const target = { ratio: 0.5, p99Ms: 30, rssMb: 200, ...(apiStandby === undefined ? {} : { standbyToPrimary: 0.9 }) };
    const standbyToPrimary =
      apiStandby === undefined ? undefined : Math.min(...measured.map((endpoint) => round((runOf(endpoint).standby?.rps ?? 0) / runOf(endpoint).api.rps, 3)));

    const failures = measured.flatMap((endpoint) => {
      const { api: a, baseline: b, redis, standby } = runOf(endpoint);
      return [a, b, ...(standby === undefined ? [] : [standby]), ...(redis === undefined ? [] : [redis.memory, redis.redis])].flatMap((m) => (m.failure === undefined ? [] : [`${endpoint} ${m.failure}`]));
    });

    return {
      bench: 'api',
      figures: {
        ...perEndpoint,
        apiPeakRssMb,
        apiIdleRssMb: megabytes(apiIdleRss),
        // The V8 heap the API had reserved after each endpoint's runs, from its /metrics (highest).
        apiHeapTotalMb: megabytes(apiHeapTotalPeak),
        baselinePeakRssMb: megabytes(baselinePeakRss),
        baselineIdleRssMb: megabytes(baselineIdleRss),
        ...(redisPeakRss === undefined ? {} : { apiRedisPeakRssMb: megabytes(redisPeakRss) }),
        apiWorstP99Ms,
        ...(standbyToPrimary === undefined ? {} : { standbyToPrimary }),
        ...(probe === undefined ? {} : { apiTxPerRequest: probe.api, baselineTxPerRequest: probe.baseline }),
        tenantOrders: data.orders,
        tenantBoxes: data.boxes,
        events: data.events,
        connections: load.connections,
        seconds: load.seconds,
        cores: availableParallelism(),
        // The machine's 1-minute load average as the runs ended (the generator, both servers and
        // Postgres share these cores, with anything else running).
        loadAvg1m: round(loadavg()[0] ?? 0, 2),
      },
      ratio,
      target,
      pass: {
        ratio: ratio >= target.ratio,
        p99Ms: apiWorstP99Ms <= target.p99Ms,
        rssMb: apiPeakRssMb <= target.rssMb,
        ...(standbyToPrimary === undefined ? {} : { standbyToPrimary: standbyToPrimary >= 0.9 }),
      },
      ...(failures.length === 0 ? {} : { failure: failures.join('; ') }),
    };
  } finally {
    // Requests still queued in a server finish before it is stopped.
    await sleep(1000);
    for (const child of [...children]) await stopChild(children, child).catch(() => undefined);
    process.off('exit', killAll);
    await stats?.end().catch(() => undefined);
    await standbyStats?.end().catch(() => undefined);
    await database.drop();
    await cluster?.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Setup.

type BenchData = {
  readonly tenant: TenantSummary;
  readonly key: string;
  readonly orderIds: readonly string[];
  readonly orders: number;
  readonly boxes: number;
  readonly events: number;
};

const countRow = z.object({ count: z.bigint() });
const orderIdRow = z.object({ orderId: z.string() });

async function prepareData(database: BenchDatabase, params: HistoryParams, orderIdCount: number): Promise<BenchData> {
  const setup = await openBenchStore(database);
  const { pool } = setup;
  try {
    const seeded = await seedAndProject(database, setup, params);

    const tenant = seeded.summary.tenants[0];
    const memberId = tenant?.memberIds[0];
    if (tenant === undefined || memberId === undefined) throw new Error('the seed has no tenant with an owner');
    const tenantId = tenant.workspaceId;
    const orders = await pool.oneFirst(sql.type(countRow)`SELECT count(*) FROM read_models.orders WHERE tenant_id = ${tenantId}`);
    const boxes = await pool.oneFirst(sql.type(countRow)`SELECT count(*) FROM read_models.boxes WHERE tenant_id = ${tenantId}`);
    // A fixed, spread-out sample (by hash, not by age) of the tenant's orders.
    const orderIds = await pool.anyFirst(sql.type(orderIdRow)`
      SELECT order_id AS "orderId" FROM read_models.orders WHERE tenant_id = ${tenantId} ORDER BY md5(order_id) LIMIT ${orderIdCount}
    `);
    if (orderIds.length === 0) throw new Error(`tenant ${tenantId} has no orders`);
    const issued = await issueBenchKey(setup, tenant, issuableScopes);
    note(`tenant ${tenantId}: ${orders} orders, ${boxes} boxes; key ${issued.prefix}… with ${issued.scopes.length} scopes; ${orderIds.length} order ids`);
    return { tenant, key: issued.key, orderIds, orders: Number(orders), boxes: Number(boxes), events: seeded.events };
  } finally {
    await setup.close();
  }
}

type RequestPaths = Readonly<Record<Endpoint, readonly string[]>>;

function requestPaths(orderIds: readonly string[]): RequestPaths {
  return {
    ordersList: ['/v1/orders?limit=50'],
    orderById: orderIds.map((id) => `/v1/orders/${encodeURIComponent(id)}`),
    balances: ['/v1/inventory/balances?limit=200'],
  };
}

// ---------------------------------------------------------------------------------------------
// Redis.

async function redisAnswers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------
// Checks and measurement.

/** Both servers must give the same data (lists: data and hasMore; the cursors differ by design). */
async function checkSameAnswers(api: Child, baseline: Child, paths: RequestPaths, headers: Record<string, string>): Promise<void> {
  for (const endpoint of endpoints) {
    for (const path of paths[endpoint].slice(0, 5)) {
      const [fromApi, fromBaseline] = await Promise.all(
        [api, baseline].map(async (child) => {
          const response = await fetch(`${child.baseUrl}${path}`, { headers });
          const body: unknown = await response.json();
          if (response.status !== 200) throw new Error(`${child.name} answered ${response.status} to GET ${path}: ${JSON.stringify(body)}`);
          return body;
        }),
      );
      const comparable = (body: unknown): unknown => {
        if (endpoint === 'orderById' || body === null || typeof body !== 'object') return body;
        const { nextCursor: _cursor, ...rest } = body as Record<string, unknown>;
        return rest;
      };
      if (!isDeepStrictEqual(comparable(fromApi), comparable(fromBaseline))) {
        throw new Error(`the API and the baseline answer GET ${path} differently:\napi      ${JSON.stringify(fromApi).slice(0, 600)}\nbaseline ${JSON.stringify(fromBaseline).slice(0, 600)}`);
      }
    }
  }
}

type LoadShape = { readonly seconds: number; readonly rounds: number; readonly warmupSeconds: number; readonly connections: number };

type Measured = {
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly responses: number;
  readonly bytesPerResponse: number;
  readonly cpuUsPerRequest: number;
  readonly postgresCpuUsPerRequest: number;
  readonly machineBusyPct: number;
  readonly loadGenCpuUsPerRequest: number;
  /** Set when any request of the warm-up or the run was not a 2xx answer. */
  readonly failure?: string;
};

type Cannonade = {
  readonly result: autocannon.Result;
  /** Of the 2xx responses, in ms, in arrival order. */
  readonly latencies: readonly number[];
  readonly statusCodes: ReadonlyMap<number, number>;
};

/** One autocannon run over `paths` (round-robin across all connections). */
function cannonade(baseUrl: string, paths: readonly string[], headers: Record<string, string>, connections: number, seconds: number): Promise<Cannonade> {
  let next = 0;
  const latencies: number[] = [];
  const statusCodes = new Map<number, number>();
  const first = paths[0] ?? '/';
  const request: autocannon.Request =
    paths.length === 1
      ? { method: 'GET', path: first }
      : {
          method: 'GET',
          path: first,
          setupRequest: (req) => {
            const path = paths[next % paths.length] ?? first;
            next += 1;
            return { ...req, path };
          },
        };
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url: baseUrl, connections, duration: seconds, headers, requests: [request], timeout: 10 },
      (error: unknown, result: autocannon.Result) => {
        if (error !== null && error !== undefined) reject(error instanceof Error ? error : new Error(String(error)));
        else resolve({ result, latencies, statusCodes });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      statusCodes.set(statusCode, (statusCodes.get(statusCode) ?? 0) + 1);
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}

function failureOf(run: Cannonade, phase: string): string | undefined {
  const { result } = run;
  const bad = [...run.statusCodes].filter(([status]) => status < 200 || status >= 300);
  if (bad.length === 0 && result.errors === 0 && result.timeouts === 0 && result.non2xx === 0) return undefined;
  return `${phase}: ${bad.map(([status, count]) => `${count}× ${status}`).join(', ') || 'no bad status'}, ${result.errors} errors, ${result.timeouts} timeouts`;
}

type MeasureContext = { readonly headers: Record<string, string>; readonly load: LoadShape; readonly backends: PostgresBackends };

/** What one server's measured slices add up to. */
type Tally = {
  ok: number;
  seconds: number;
  wallSeconds: number;
  bytes: number;
  latencies: number[];
  childCpu: number;
  postgresCpu: number;
  machineCpu: number;
  loadGenCpu: number;
  failures: string[];
};

/**
 * Warms every server up, then measures them in `rounds` alternating slices of seconds/rounds each
 * (the order reversed every other round), pausing after each slice.
 */
async function measureInterleaved(endpoint: Endpoint, children: readonly Child[], paths: readonly string[], { headers, load, backends }: MeasureContext): Promise<Measured[]> {
  const tallies = children.map(
    (): Tally => ({ ok: 0, seconds: 0, wallSeconds: 0, bytes: 0, latencies: [], childCpu: 0, postgresCpu: 0, machineCpu: 0, loadGenCpu: 0, failures: [] }),
  );
  const record = (tally: Tally, failure: string | undefined): void => {
    if (failure === undefined) return;
    tally.failures.push(failure);
    note(`!!! ${endpoint}: ${failure}`);
  };
  if (load.warmupSeconds > 0) {
    for (const [index, child] of children.entries()) {
      const tally = tallies[index];
      const warm = await cannonade(child.baseUrl, paths, headers, load.connections, load.warmupSeconds);
      if (tally !== undefined) record(tally, failureOf(warm, `${child.name} warm-up`));
      await sleep(slicePauseMs);
    }
  }
  const sliceSeconds = load.seconds / load.rounds;
  for (let round = 0; round < load.rounds; round += 1) {
    const order = children.map((child, index) => ({ child, tally: tallies[index] }));
    if (round % 2 === 1) order.reverse();
    for (const { child, tally } of order) {
      const pid = child.process.pid;
      if (pid === undefined || tally === undefined) throw new Error(`${child.name} has no pid`);
      const childCpu = await processCpuSeconds(pid);
      const postgresCpu = await backends.cpu();
      const machine = await machineCpuSeconds();
      const self = process.cpuUsage();
      const started = performance.now();
      const slice = await cannonade(child.baseUrl, paths, headers, load.connections, sliceSeconds);
      tally.wallSeconds += (performance.now() - started) / 1000;
      const selfCpu = process.cpuUsage(self);
      tally.childCpu += (await processCpuSeconds(pid)) - childCpu;
      tally.machineCpu += (await machineCpuSeconds()) - machine;
      tally.postgresCpu += await backends.cpuSince(postgresCpu);
      tally.loadGenCpu += (selfCpu.user + selfCpu.system) / 1e6;
      tally.ok += slice.result['2xx'];
      tally.seconds += slice.result.duration;
      tally.bytes += slice.result.throughput.total;
      for (const latency of slice.latencies) tally.latencies.push(latency);
      record(tally, failureOf(slice, child.name));
      await sleep(slicePauseMs);
    }
  }
  return tallies.map((tally) => {
    const { ok } = tally;
    const perRequestUs = (seconds: number): number => (ok === 0 ? 0 : Math.round((seconds * 1e6) / ok));
    const latencies = Float64Array.from(tally.latencies).sort();
    return {
      rps: Math.round(ok / tally.seconds),
      p50Ms: round(percentile(latencies, 0.5), 2),
      p99Ms: round(percentile(latencies, 0.99), 2),
      responses: ok,
      bytesPerResponse: ok === 0 ? 0 : Math.round(tally.bytes / ok),
      cpuUsPerRequest: perRequestUs(tally.childCpu),
      postgresCpuUsPerRequest: perRequestUs(tally.postgresCpu),
      machineBusyPct: Math.round((100 * tally.machineCpu) / (tally.wallSeconds * availableParallelism())),
      loadGenCpuUsPerRequest: perRequestUs(tally.loadGenCpu),
      ...(tally.failures.length === 0 ? {} : { failure: tally.failures.join('; ') }),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// /proc readings.

function rssOf(child: Child): Promise<number> {
  return processRss(child.process.pid ?? Number.NaN);
}

/** The API's V8 heap and external memory, from the prom-client default metrics on /metrics. */
async function heapOf(child: Child): Promise<{ total: number; used: number; external: number }> {
  const text = await (await fetch(`${child.baseUrl}/metrics`)).text();
  const metric = (name: string): number => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { total: metric('nodejs_heap_size_total_bytes'), used: metric('nodejs_heap_size_used_bytes'), external: metric('nodejs_external_memory_bytes') };
}

/** Peak RSS of the child, read every 200 ms until stop(). */
function sampleRss(child: Child): { stop(): number } {
  let peak = 0;
  const timer = setInterval(() => {
    void rssOf(child)
      .then((rss) => {
        peak = Math.max(peak, rss);
      })
      .catch(() => undefined);
  }, 200);
  void rssOf(child).then((rss) => {
    peak = Math.max(peak, rss);
  });
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}

type PostgresBackends = {
  /** CPU seconds so far of each backend connected to the bench database. */
  cpu(): Promise<ReadonlyMap<number, number>>;
  /** CPU seconds its backends spent since `before` (a backend new since then counts from 0). */
  cpuSince(before: ReadonlyMap<number, number>): Promise<number>;
};

/** The bench database's backends, listed from pg_stat_activity (on `client`, another database). */
function postgresBackends(client: pg.Client, databaseName: string): PostgresBackends {
  const cpu = async (): Promise<Map<number, number>> => {
    const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [databaseName]);
    const seconds = new Map<number, number>();
    for (const { pid } of rows) {
      // A backend may exit between the listing and the read.
      const used = await processCpuSeconds(pid).catch(() => undefined);
      if (used !== undefined) seconds.set(pid, used);
    }
    return seconds;
  };
  return {
    cpu,
    cpuSince: async (before) => {
      let total = 0;
      for (const [pid, seconds] of await cpu()) total += seconds - (before.get(pid) ?? 0);
      return total;
    },
  };
}

/** The backends of the primary and of the standby, as one. */
function bothBackends(primary: PostgresBackends, standby: PostgresBackends): PostgresBackends {
  return {
    cpu: async () => {
      const [a, b] = await Promise.all([primary.cpu(), standby.cpu()]);
      return new Map([...a, ...b]);
    },
    cpuSince: async (before) => (await primary.cpuSince(before)) + (await standby.cpuSince(before)),
  };
}

/** Waits until the API child's /readyz says its standby serves reads (the steward has made it synchronous). */
async function standbyInUse(child: Child): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const response = await fetch(`${child.baseUrl}/readyz`).catch(() => undefined);
    const body = (await response?.json().catch(() => undefined)) as { standbys?: { inUse: boolean; reason?: string }[] } | undefined;
    if (body?.standbys?.[0]?.inUse === true) return;
    await sleep(100);
  }
  throw new Error(`${child.name}: the standby did not come into use within 60 s`);
}

/** Busy CPU seconds of the whole machine (all cores, everything but idle and iowait). */
async function machineCpuSeconds(): Promise<number> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0] ?? '';
  const [, ...ticks] = line.trim().split(/\s+/).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = ticks;
  return (user + nice + system + irq + softirq + steal) / clockTicksPerSecond;
}

// ---------------------------------------------------------------------------------------------
// Transactions per request.

type TransactionCounter = { read(): Promise<number> };

/** xact_commit + xact_rollback of the bench database, read from a connection to another database. */
function transactionCounter(client: pg.Client, databaseName: string): TransactionCounter {
  return {
    read: async () => {
      const { rows } = await client.query<{ xacts: string }>(
        'SELECT (xact_commit + xact_rollback)::text AS xacts FROM pg_stat_database WHERE datname = $1',
        [databaseName],
      );
      return Number(rows[0]?.xacts ?? Number.NaN);
    },
  };
}

/**
 * The count once the bench database's backends have flushed their statistics: an idle backend
 * flushes after 10 s (pools close idle connections after 10 s too, and an exiting backend
 * flushes); then it must hold still for 2 s.
 */
async function settledTransactions(counter: TransactionCounter): Promise<number> {
  await sleep(11_000);
  let last = await counter.read();
  for (let stable = 0; stable < 2; ) {
    await sleep(1000);
    const now = await counter.read();
    stable = now === last ? stable + 1 : 0;
    last = now;
  }
  return last;
}

async function transactionProbe(
  counter: TransactionCounter,
  api: Child,
  baseline: Child,
  paths: RequestPaths,
  headers: Record<string, string>,
): Promise<{ api: number; baseline: number }> {
  note('transaction probe: 100 sequential requests per endpoint on each server, waiting for Postgres statistics (~35 s)');
  const requests = async (child: Child): Promise<number> => {
    let sent = 0;
    for (const endpoint of endpoints) {
      const list = paths[endpoint];
      for (let i = 0; i < 100; i += 1) {
        const response = await fetch(`${child.baseUrl}${list[i % list.length] ?? ''}`, { headers });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`${child.name} answered ${response.status} during the transaction probe`);
        sent += 1;
      }
    }
    return sent;
  };
  const before = await settledTransactions(counter);
  const apiRequests = await requests(api);
  const between = await settledTransactions(counter);
  const baselineRequests = await requests(baseline);
  const after = await settledTransactions(counter);
  const result = { api: round((between - before) / apiRequests, 2), baseline: round((after - between) / baselineRequests, 2) };
  note(`Postgres transactions per request: api ${result.api}, baseline ${result.baseline}`);
  return result;
}
