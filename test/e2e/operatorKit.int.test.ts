import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startCli } from '../support/cli.js';
import { createPostgresTestDatabase, type TestDatabase } from '../support/databases.js';
import { services } from '../support/services.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dashboardFile = `${root}ops/grafana/dashboard.json`;
const rulesFile = `${root}ops/prometheus/alerts.yml`;
const rulesTestFile = `${root}ops/prometheus/alerts.test.yml`;
const inCi = process.env.CI === 'true' || process.env.CI === '1';
const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((path) => existsSync(path));

/** Prometheus's own series (not exported by the service) that the rules may use. */
const prometheusSeries = new Set(['up']);

/** The metric names a PromQL expression reads (words followed by a selector, a range or used bare). */
export function metricNamesOf(expr: string): string[] {
  const withoutStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const keywords = new Set(['sum', 'max', 'min', 'avg', 'count', 'rate', 'increase', 'irate', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'or', 'and', 'unless', 'histogram_quantile', 'clamp_min', 'clamp_max', 'label_values', 'le', 'bool', 'offset', 'abs', 'absent', 'topk', 'bottomk', 'vector']);
  const names = new Set<string>();
  // Drop label lists (`by (le, route)`, `{route=~"…"}`) and ranges (`[5m]`) before reading names.
  const bare = withoutStrings
    .replace(/(?<![A-Za-z0-9_:])\d+(?:\.\d+)?(?:e[+-]?\d+)?/gi, ' ')
    .replace(/\{[^}]*\}/g, ' ').replace(/\[[^\]]*\]/g, ' ').replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, ' ');
  for (const match of bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const word = match[0];
    if (!keywords.has(word) && !word.startsWith('$') && !/^\d/.test(word)) names.add(word);
  }
  return [...names];
}

/** Every expression of the dashboard's panels and of the alert rules. */
async function queriedExpressions(): Promise<{ where: string; expr: string }[]> {
  const dashboard = JSON.parse(await readFile(dashboardFile, 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] };
  const fromDashboard = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ where: `dashboard: ${panel.title}`, expr: target.expr })));
  const rules = await readFile(rulesFile, 'utf8');
  const fromRules = [...rules.matchAll(/^\s*-\s*alert:\s*(\S+)\s*\n\s*expr:\s*(.+)$/gm)].map((match) => ({ where: `alert ${match[1] ?? ''}`, expr: match[2] ?? '' }));
  return [...fromDashboard, ...fromRules];
}

describe('the operator kit', () => {
  test('the PromQL reader finds metric names, not functions, labels or variables', () => {
    expect(metricNamesOf('histogram_quantile(0.99, sum by (le, route) (rate(supply_http_request_duration_seconds_bucket{job=~"$job",route=~"/v1/.*"}[$__rate_interval])))')).toEqual([
      'supply_http_request_duration_seconds_bucket',
    ]);
    expect(metricNamesOf('sum(rate(a_total[5m])) / clamp_min(sum(rate(b_total[5m])), 1e-9)')).toEqual(['a_total', 'b_total']);
    expect(metricNamesOf('max by (projection) (supply_projection_lag_seconds) > 30 or max by (projection) (supply_projection_lag_events) > 5000')).toEqual([
      'supply_projection_lag_seconds',
      'supply_projection_lag_events',
    ]);
  });

  test.runIf(promtool !== undefined || inCi)('promtool accepts the alert rules', async () => {
    if (promtool === undefined) throw new Error('CI=true and promtool is missing: .ci/run installs Debian\'s prometheus package');
    const { stdout } = await promisify(execFile)(promtool, ['check', 'rules', rulesFile]);
    expect(stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  test.runIf(promtool !== undefined || inCi)('the alert rules pass their unit tests (one lag alert per stopped projector, /readyz 503s are no 5xx, exports nobody takes)', async () => {
    if (promtool === undefined) throw new Error('CI=true and promtool is missing: .ci/run installs Debian\'s prometheus package');
    const { stdout } = await promisify(execFile)(promtool, ['test', 'rules', rulesTestFile]);
    expect(stdout).toMatch(/SUCCESS/);
  });

  test.runIf(promtool !== undefined || inCi)('the dashboard\'s 5xx ratio is 0, not "No data", when nothing failed (and /readyz 503s do not count)', async () => {
    if (promtool === undefined) throw new Error('CI=true and promtool is missing: .ci/run installs Debian\'s prometheus package');
    const dashboard = JSON.parse(await readFile(dashboardFile, 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] };
    const expr = dashboard.panels.find((panel) => panel.title === '5xx ratio')?.targets?.[0]?.expr;
    if (expr === undefined) throw new Error('the dashboard has no 5xx ratio panel');
    // As Grafana sends it: every job, a 5 min rate window.
    const sent = expr.replaceAll('$job', '.*').replaceAll('$__rate_interval', '5m');
    const series = (route: string, status: number, perMinute: number) => ({ series: `supply_http_requests_total{job="supply-api",route="${route}",method="GET",status="${status}"}`, values: `0+${perMinute}x10` });
    const zeroAt10m = { expr: sent, eval_time: '10m', exp_samples: [{ labels: '{}', value: 0 }] };
    const tests = {
      evaluation_interval: '1m',
      tests: [
        { interval: '1m', input_series: [series('/v1/orders', 200, 60), series('/readyz', 503, 6)], promql_expr_test: [zeroAt10m] },
        { interval: '1m', input_series: [series('/healthz', 200, 6)], promql_expr_test: [zeroAt10m] },
        { interval: '1m', input_series: [series('/v1/orders', 200, 90), series('/v1/orders', 500, 10)], promql_expr_test: [{ ...zeroAt10m, exp_samples: [{ labels: '{}', value: 0.1 }] }] },
      ],
    };
    const folder = await mkdtemp(path.join(os.tmpdir(), 'supply-dashboard-'));
    try {
      // JSON is YAML: promtool reads it as its test file.
      const file = path.join(folder, 'dashboard.test.yml');
      await writeFile(file, JSON.stringify(tests));
      const { stdout } = await promisify(execFile)(promtool, ['test', 'rules', file]);
      expect(stdout).toMatch(/SUCCESS/);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe.runIf(services.postgres)('the dashboard and the alert rules read metrics that /metrics exports', () => {
  let database: TestDatabase;
  let exported: Set<string>;
  beforeAll(async () => {
    database = await createPostgresTestDatabase({ migrated: false });
    // Every role, as `serve` runs by default: the metrics are those of a real process.
    const server = await startCli(['serve', '--port', '0'], { DATABASE_URL: database.url, LOG_LEVEL: 'info' }, /"port":(\d+),"roles"/);
    try {
      const port = /"port":(\d+),"roles"/.exec(server.output())?.[1];
      const text = await (await fetch(`http://127.0.0.1:${port ?? ''}/metrics`)).text();
      exported = new Set<string>();
      for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
        if (name === undefined) continue;
        exported.add(name);
        if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exported.add(`${name}${suffix}`);
        if (type === 'summary') for (const suffix of ['_sum', '_count']) exported.add(`${name}${suffix}`);
      }
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
  afterAll(async () => {
    await database?.close();
  });

  test('every metric a panel or a rule queries is exported', async () => {
    const expressions = await queriedExpressions();
    expect(expressions.length).toBeGreaterThan(20);
    const missing = expressions.flatMap(({ where, expr }) => metricNamesOf(expr).filter((name) => !exported.has(name) && !prometheusSeries.has(name)).map((name) => `${where}: ${name}`));
    expect(missing).toEqual([]);
    // The HTTP metrics the issue asks for are there.
    for (const name of ['supply_http_requests_total', 'supply_http_request_duration_seconds_bucket', 'supply_request_budget_exhausted_total', 'supply_request_budget_refunds_total', 'supply_mcp_tool_calls_total', 'supply_ready']) {
      expect(exported.has(name), name).toBe(true);
    }
  });
});
