// `npm run drill`: failure drills against real Postgres, Redis and an S3-compatible server (s3rver),
// on 2 API processes, 2 projectors and 2 export workers, and against a primary and hot standby of
// the drill's own (READ_DATABASE_URL; Debian's PostgreSQL server tools, run as the postgres user). Prints one JSON line with each drill's
// figures on stdout (progress on stderr) and exits 1 when a drill fails.
import os from 'node:os';
import { shutdownGraceMs } from '../src/main/serve.js';
import { runCli } from '../test/support/cli.js';
import { startDeployment, type Deployment } from './deployment.js';
import { failoverDrill } from './failover.js';
import { postgresCut, type PostgresCutFigures } from './postgresCut.js';
import { projectorKill } from './projectorKill.js';
import { readReplicaDrill } from './readReplicas.js';
import { redisDown } from './redisDown.js';
import { workerKill } from './workerKill.js';

const postgresUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const log = (line: string): void => void process.stderr.write(`drill: ${line}\n`);
/** DRILL_ONLY=projectorKill,workerKill runs only those (for working on one drill). */
const only = process.env.DRILL_ONLY?.split(',').filter((name) => name !== '');
const wanted = (name: string): boolean => only === undefined || only.includes(name);
/** `npm run drill failover`: the high-availability drill alone, on a Patroni cluster and Sentinel set-up of its own. */
const step = process.argv[2];

async function main(): Promise<number> {
  const started = performance.now();
  if (step === 'failover') {
    const figures = await failoverDrill({ clients: 32, log }).catch((error: unknown) => ({ failures: [`drill aborted: ${error instanceof Error ? error.message : String(error)}`] }));
    process.stdout.write(`${JSON.stringify({ passed: figures.failures.length === 0, seconds: Math.round((performance.now() - started) / 1000), failover: figures, machineLoad: os.loadavg().map((n) => Math.round(n * 10) / 10) })}\n`);
    return figures.failures.length === 0 ? 0 : 1;
  }
  if (step !== undefined) throw new Error(`unknown drill step ${step} (known: failover)`);
  if (only !== undefined && only.every((name) => name === 'readReplicas')) {
    // The read-replica drill runs on a cluster of its own: the shared deployment is not needed.
    const figures = await readReplicaDrill({ clients: 32, log }).catch((error: unknown) => ({ failures: [`drill aborted: ${error instanceof Error ? error.message : String(error)}`] }));
    const failures = figures.failures.map((failure) => `readReplicas: ${failure}`);
    process.stdout.write(`${JSON.stringify({ passed: failures.length === 0, seconds: Math.round((performance.now() - started) / 1000), readReplicas: figures, failures })}\n`);
    return failures.length === 0 ? 0 : 1;
  }
  const deployment = await startDeployment({ postgresAdminUrl: postgresUrl, redisUrl, seed: 7, log });
  const results: Record<string, unknown> = {};
  const failures: string[] = [];
  const record = <T extends { readonly failures: readonly string[] }>(name: string, figures: T): void => {
    results[name] = figures;
    failures.push(...figures.failures.map((failure) => `${name}: ${failure}`));
    log(`${name}: ${figures.failures.length === 0 ? 'passed' : `FAILED (${figures.failures.join('; ')})`}`);
  };
  try {
    const waited = await runCli(['projections', 'wait', '--timeout', '120'], deployment.env);
    if (waited.code !== 0) throw new Error(`projections did not catch up: ${waited.stderr}`);
    for (const mode of ['stop', 'partition'] as const) {
      if (!wanted(mode === 'stop' ? 'postgresCut' : 'postgresPartition')) continue;
      log(`Postgres ${mode} for 10 s under 32 clients`);
      const cut: PostgresCutFigures = await postgresCut(cutTarget(deployment), { clients: 32, cutMs: 10_000, mode });
      const died = deployment.processes.filter((p) => p.child === undefined || p.child.exitCode !== null || p.child.signalCode !== null).map((p) => p.name);
      record(mode === 'stop' ? 'postgresCut' : 'postgresPartition', { ...cut, died, failures: [...cut.failures, ...cut.overBounds, ...died.map((name) => `${name} ended during the outage`)] });
    }
    if (wanted('projectorKill')) {
      log('SIGKILL of the active projector while it applies new events');
      record('projectorKill', await projectorKill(deployment, 8));
    }
    if (wanted('workerKill')) {
      log('SIGKILL of a worker in the middle of an export');
      record('workerKill', await workerKill(deployment, 120_000));
    }
    if (wanted('redisDown')) {
      log('Redis down');
      record('redisDown', await redisDown(deployment));
    }
    if (wanted('readReplicas')) {
      log('read replicas: a primary and hot standby of the drill\'s own, 2 API processes reading from the standby');
      record('readReplicas', await readReplicaDrill({ clients: 32, log }));
    }
    log('SIGTERM of every process');
    const exits = await deployment.stopAll(shutdownGraceMs + 2_000);
    const late = Object.entries(exits).filter(([, ms]) => ms === null || ms > shutdownGraceMs);
    record('shutdown', { graceMs: shutdownGraceMs, exitMs: exits, failures: late.map(([name]) => `${name} did not end within ${shutdownGraceMs} ms of SIGTERM`) });
  } catch (error) {
    failures.push(`drill aborted: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await deployment.close();
  }
  process.stdout.write(`${JSON.stringify({ passed: failures.length === 0, seconds: Math.round((performance.now() - started) / 1000), ...results, failures })}\n`);
  return failures.length === 0 ? 0 : 1;
}

function cutTarget(deployment: Deployment) {
  return { apiBases: deployment.byRole('api').map((api) => api.base()), proxies: deployment.processes.map((p) => p.postgres), key: deployment.key };
}

process.exitCode = await main();
