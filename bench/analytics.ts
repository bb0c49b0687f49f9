import { Agent, get } from 'node:http';
import type { Socket } from 'node:net';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { createProgressBar } from '../src/cli/progressBar.js';
import { historyDefaults, startOfUtcDay, type HistoryParams, type HistoryScale } from '../src/console/history/historyParams.js';
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
  historyParamsOf,
  type Child,
} from './benchSupport.js';
import type { BenchResult } from './run.js';

/**
 * Latency of the analytics reads on a small and a large history, each against GET /v1/me on the
 * same server (the floor of an authenticated, budgeted /v1 request: the key check and one small
 * read), on real Postgres in a database of its own per seed, dropped at the end:
 *
 *   npm run bench -- analytics [--only small|large] [--requests 500] [--warmup 50]
 *                              [--tenants 2] [--days 90] [--seed 7] [--as-of YYYY-MM-DD] [--cpu-prof DIR]
 *
 * Per seed (setup, not measured): migrate, append the console's seed history (`small`: about
 * 4 000 events per tenant; `large`: about 1 000 000 in all), rebuild every projection to the head
 * of the log (the analytics one included), VACUUM ANALYZE, and issue a key holding only
 * `analytics:read` for the first tenant's owner. The history ends by default at the start of the
 * current UTC day, so that the weekly briefing's window (today and the six days before it) holds
 * data.
 *
 * Then the real API as a child process (`serve --roles api`, LOG_LEVEL=warn, the request budget
 * raised to 1 000 000 a minute; no projector, the data is projected already) answers, sequentially
 * over one keep-alive connection:
 *   GET /v1/analytics/briefing?period=weekly, GET /v1/analytics/exceptions and GET /v1/me,
 * round-robin (the first of the three rotates every round, so that drift and what one request
 * leaves warm hit all three alike): `--warmup` rounds discarded, then `--requests` rounds measured.
 * Each time runs from sending the request to the last byte of the answer (performance.now()).
 * Every answer must be a 200, or the bench fails (exit code 1) after printing.
 *
 * Figures per seed: p50/p99 of each endpoint in ms; ratios: each analytics endpoint's p50 over
 * /v1/me's on the same seed, and large over small p50 per endpoint. `ratio` is the worse of the two
 * large/small ratios. Targets: every analytics p50 ≤ 20 ms, large ≤ 1.5 × small.
 */

const scales = ['small', 'large'] as const satisfies readonly HistoryScale[];
type Scale = (typeof scales)[number];

const endpoints = [
  { name: 'briefing', path: '/v1/analytics/briefing?period=weekly' },
  { name: 'exceptions', path: '/v1/analytics/exceptions' },
  { name: 'me', path: '/v1/me' },
] as const;
type EndpointName = (typeof endpoints)[number]['name'];

/** The largest RATE_LIMIT_PER_MINUTE the configuration accepts (src/config/config.ts). */
const raisedBudgetPerMinute = 1_000_000;
/** A request that takes longer than this is a failure. */
const requestTimeoutMs = 30_000;
const target = { p50Ms: 20, largeToSmall: 1.5 };

type SeedRun = {
  readonly events: number;
  readonly seedSeconds: number;
  readonly projectSeconds: number;
  readonly latencies: Readonly<Record<EndpointName, Float64Array>>;
  readonly failures: readonly string[];
};

export async function run(args: readonly string[]): Promise<BenchResult> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      only: { type: 'string' },
      requests: { type: 'string', default: '500' },
      warmup: { type: 'string', default: '50' },
      tenants: { type: 'string', default: String(historyDefaults.tenants) },
      days: { type: 'string', default: String(historyDefaults.days) },
      seed: { type: 'string', default: '7' },
      'as-of': { type: 'string', default: startOfUtcDay(new Date()).toISOString().slice(0, 10) },
      'cpu-prof': { type: 'string' },
    },
  });
  const measuredScales: readonly Scale[] = values.only === undefined ? scales : [oneOf('only', values.only, scales)];
  const options: SeedOptions = {
    requests: positiveInteger('requests', values.requests),
    warmup: wholeNumber('warmup', values.warmup),
    cpuProfDir: values['cpu-prof'],
  };
  const paramsOf = (scale: Scale): HistoryParams => historyParamsOf(values, { scale });

  const started = performance.now();
  const runs = new Map<Scale, SeedRun>();
  for (const scale of measuredScales) runs.set(scale, await benchSeed(paramsOf(scale), options));
  const runSeconds = round((performance.now() - started) / 1000, 1);

  const p50 = (scale: Scale, endpoint: EndpointName): number | undefined => {
    const latencies = runs.get(scale)?.latencies[endpoint];
    return latencies === undefined ? undefined : round(percentile(latencies, 0.5), 2);
  };
  const figuresOf = (seedRun: SeedRun): Record<string, number> => ({
    ...Object.fromEntries(
      endpoints.flatMap(({ name }) => [
        [`${name}P50`, round(percentile(seedRun.latencies[name], 0.5), 2)],
        [`${name}P99`, round(percentile(seedRun.latencies[name], 0.99), 2)],
      ]),
    ),
    events: seedRun.events,
    seedSeconds: round(seedRun.seedSeconds, 1),
    projectSeconds: round(seedRun.projectSeconds, 1),
  });

  const ratios: Record<string, number> = {};
  const ratioOf = (over: number | undefined, under: number | undefined): number | undefined =>
    over === undefined || under === undefined || under === 0 ? undefined : round(over / under, 2);
  for (const name of ['briefing', 'exceptions'] as const) {
    const largeToSmall = ratioOf(p50('large', name), p50('small', name));
    if (largeToSmall !== undefined) ratios[`${name}LargeToSmall`] = largeToSmall;
  }
  for (const scale of measuredScales) {
    for (const name of ['briefing', 'exceptions'] as const) {
      const toMe = ratioOf(p50(scale, name), p50(scale, 'me'));
      if (toMe !== undefined) ratios[`${name}ToMe${scale === 'small' ? 'Small' : 'Large'}`] = toMe;
    }
  }
  const largeToSmall = [ratios.briefingLargeToSmall, ratios.exceptionsLargeToSmall].filter((r): r is number => r !== undefined);
  const ratio = largeToSmall.length === 0 ? undefined : Math.max(...largeToSmall);
  const analyticsP50s = measuredScales.flatMap((scale) => (['briefing', 'exceptions'] as const).map((name) => p50(scale, name) ?? Number.POSITIVE_INFINITY));
  const failures = measuredScales.flatMap((scale) => (runs.get(scale)?.failures ?? []).map((failure) => `${scale}: ${failure}`));

  note(`run took ${runSeconds} s${runSeconds > 600 ? ' (more than the 10 minutes it should take)' : ''}`);
  return {
    bench: 'analytics',
    figures: {
      ...Object.fromEntries(measuredScales.flatMap((scale) => {
        const seedRun = runs.get(scale);
        return seedRun === undefined ? [] : [[scale, figuresOf(seedRun)]];
      })),
      ratios,
      requests: options.requests,
      runSeconds,
    },
    ...(ratio === undefined ? {} : { ratio }),
    target,
    pass: {
      p50: analyticsP50s.every((value) => value <= target.p50Ms),
      ...(ratio === undefined ? {} : { largeToSmall: ratio <= target.largeToSmall }),
    },
    ...(failures.length === 0 ? {} : { failure: failures.join('; ') }),
  };
}

// ---------------------------------------------------------------------------------------------
// One seed: its database, its API process, its measurement.

type SeedOptions = { readonly requests: number; readonly warmup: number; readonly cpuProfDir: string | undefined };

const countRow = z.object({ count: z.number() });

async function benchSeed(params: HistoryParams, options: SeedOptions): Promise<SeedRun> {
  note(`\n== ${params.scale} seed ==`);
  const database = await createBenchDatabase();
  const children = new Set<Child>();
  // The API must not outlive the bench, whatever ends it.
  const killAll = (): void => {
    for (const child of children) child.process.kill('SIGKILL');
  };
  process.once('exit', killAll);
  try {
    const setup = await openBenchStore(database);
    let prepared: { readonly key: string; readonly events: number; readonly seedSeconds: number; readonly projectSeconds: number };
    try {
      const seeded = await seedAndProject(database, setup, params);
      const tenant = seeded.summary.tenants[0];
      if (tenant === undefined) throw new Error('the seed has no tenant');
      const issued = await issueBenchKey(setup, tenant, ['analytics:read']);
      note(`tenant ${tenant.workspaceId}: key ${issued.prefix}… holding ${issued.scopes.join(', ')}; its analytics rows:`);
      for (const table of ['boxes', 'stock_levels', 'orders', 'consumption_daily', 'cycle_stages_daily', 'delivery_exceptions', 'receipt_discrepancies']) {
        const rows = await setup.pool.oneFirst(sql.type(countRow)`
          SELECT count(*)::int AS count FROM ${sql.identifier(['read_models', `analytics_${table}`])} WHERE tenant_id = ${tenant.workspaceId}
        `);
        note(`  analytics_${table}: ${rows}`);
      }
      prepared = { key: issued.key, events: seeded.events, seedSeconds: seeded.seedSeconds, projectSeconds: seeded.projectSeconds };
    } finally {
      await setup.close();
    }

    const api = await startChild(
      children,
      `api ${params.scale}`,
      ['bin/supply-api.js', 'serve', '--roles', 'api'],
      { DATABASE_URL: database.connectionUri, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: String(raisedBudgetPerMinute) },
      options.cpuProfDir,
    );
    note(`api pid ${api.process.pid} on ${api.baseUrl}`);
    const measured = await measure(api.baseUrl, prepared.key, options);
    const line = endpoints
      .map(({ name }) => `${name} p50 ${round(percentile(measured.latencies[name], 0.5), 2)} p99 ${round(percentile(measured.latencies[name], 0.99), 2)} ms`)
      .join(' | ');
    note(`${params.scale}: ${line}`);
    return { events: prepared.events, seedSeconds: prepared.seedSeconds, projectSeconds: prepared.projectSeconds, ...measured };
  } finally {
    for (const child of [...children]) await stopChild(children, child).catch(() => undefined);
    process.off('exit', killAll);
    await database.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// Measurement: sequential requests over one keep-alive connection.

type Answer = { readonly status: number; readonly body: Buffer; readonly ms: number };

async function measure(
  baseUrl: string,
  key: string,
  { requests, warmup }: SeedOptions,
): Promise<{ latencies: Record<EndpointName, Float64Array>; failures: string[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const sockets = new Set<Socket>();
  const url = new URL(baseUrl);
  const headers = { authorization: `Bearer ${key}`, 'accept-language': 'en' };
  const request = (path: string): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const req = get({ host: url.hostname, port: url.port, path, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), ms: performance.now() - started }));
      });
      req.on('socket', (socket) => sockets.add(socket));
      req.on('error', reject);
      req.setTimeout(requestTimeoutMs, () => req.destroy(new Error(`no answer within ${requestTimeoutMs} ms`)));
    });

  const latencies = Object.fromEntries(endpoints.map(({ name }) => [name, [] as number[]])) as Record<EndpointName, number[]>;
  const bad = new Map<string, number>();
  const described = new Map<EndpointName, string>();
  const bar = createProgressBar('requests', 'rounds', true);
  bar.start(warmup + requests);
  try {
    for (let round = 0; round < warmup + requests; round += 1) {
      for (let i = 0; i < endpoints.length; i += 1) {
        const endpoint = endpoints[(round + i) % endpoints.length];
        if (endpoint === undefined) continue;
        let answer: Answer;
        try {
          answer = await request(endpoint.path);
        } catch (error) {
          const failure = `${endpoint.name}: ${error instanceof Error ? error.message : String(error)}`;
          bad.set(failure, (bad.get(failure) ?? 0) + 1);
          continue;
        }
        if (answer.status !== 200) {
          const failure = `${endpoint.name}: ${answer.status} ${answer.body.toString('utf8').slice(0, 200)}`;
          bad.set(failure, (bad.get(failure) ?? 0) + 1);
          continue;
        }
        if (!described.has(endpoint.name)) described.set(endpoint.name, describe(endpoint.name, answer));
        if (round >= warmup) latencies[endpoint.name].push(answer.ms);
      }
      bar.update(round + 1);
    }
  } finally {
    bar.stop();
    agent.destroy();
  }
  for (const [name, description] of described) note(`  first answer of ${name}: ${description}`);
  if (sockets.size !== 1) note(`!!! the requests used ${sockets.size} connections, not one (keep-alive broken?)`);
  const failures = [...bad].map(([failure, count]) => `${count}× ${failure}`);
  for (const failure of failures) note(`!!! ${failure}`);
  return {
    latencies: Object.fromEntries(endpoints.map(({ name }) => [name, Float64Array.from(latencies[name]).sort()])) as Record<EndpointName, Float64Array>,
    failures,
  };
}

/** What the first answer of an endpoint held, for the log (and to see the data is not empty). */
function describe(endpoint: EndpointName, { body, ms }: Answer): string {
  const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  const size = `${body.length} bytes, ${ms.toFixed(1)} ms`;
  switch (endpoint) {
    case 'briefing': {
      const figures = Array.isArray(parsed.figures) ? (parsed.figures as { metric?: string }[]) : [];
      const perMetric = new Map<string, number>();
      for (const figure of figures) perMetric.set(figure.metric ?? '?', (perMetric.get(figure.metric ?? '?') ?? 0) + 1);
      return `${figures.length} figures (${[...perMetric].map(([metric, count]) => `${metric} ${count}`).join(', ')}), truncated ${String(parsed.truncated)}; ${size}`;
    }
    case 'exceptions': {
      const exceptions = Array.isArray(parsed.exceptions) ? (parsed.exceptions as { metric?: string }[]) : [];
      const perMetric = new Map<string, number>();
      for (const item of exceptions) perMetric.set(item.metric ?? '?', (perMetric.get(item.metric ?? '?') ?? 0) + 1);
      return `total ${String(parsed.total)}, ${exceptions.length} listed (${[...perMetric].map(([metric, count]) => `${metric} ${count}`).join(', ')}), truncated ${String(parsed.truncated)}; ${size}`;
    }
    case 'me':
      return `${JSON.stringify(parsed)}; ${size}`;
  }
}
