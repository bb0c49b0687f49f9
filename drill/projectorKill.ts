import { setTimeout as sleep } from 'node:timers/promises';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { allProjections } from '../projections/index.js';
import { sql } from '../src/platform/sql.js';
import { runCli } from '../test/support/cli.js';
import { readModelDigests } from '../test/support/projectionTestBed.js';
import type { Deployment, ServiceProcess } from './deployment.js';

export type ProjectorKillFigures = {
  readonly killed: string;
  readonly projectionsHeld: number;
  readonly lagAtKill: number;
  readonly takeoverMs: number | null;
  readonly caughtUpMs: number | null;
  readonly tablesCompared: number;
  readonly tablesDiffering: string[];
  readonly failures: string[];
};

/** The standby must hold every projection this soon after the active projector is killed. */
export const takeoverBoundMs = 10_000;

const lockRow = z.object({ clientPort: z.number().int(), locks: z.number().int() });

/** Projection locks held, by the projector process whose proxy carries the connection holding them. */
async function locksByProjector(pool: DatabasePool, projectors: readonly ServiceProcess[]): Promise<Map<ServiceProcess, number>> {
  const rows = await pool.any(sql.type(lockRow)`
    SELECT a.client_port AS "clientPort", count(*)::int AS locks
    FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database() AND a.client_port IS NOT NULL
    GROUP BY a.client_port
  `);
  const held = new Map<ServiceProcess, number>();
  for (const row of rows) {
    const owner = projectors.find((p) => p.postgres.upstreamPorts().includes(row.clientPort));
    if (owner !== undefined) held.set(owner, (held.get(owner) ?? 0) + row.locks);
  }
  return held;
}

async function advisoryLocks(pool: DatabasePool): Promise<readonly unknown[]> {
  return pool.any(sql.type(z.object({ clientPort: z.number().nullable(), datname: z.string().nullable(), granted: z.boolean() }))`
    SELECT a.client_port AS "clientPort", a.datname, l.granted FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory'
  `);
}

const headRow = z.object({ head: z.bigint(), applied: z.bigint() });

/** Events behind the head, for the projection furthest behind. */
async function lag(pool: DatabasePool): Promise<number> {
  const row = await pool.one(sql.type(headRow)`
    SELECT (SELECT count(*) FROM events) AS head,
      coalesce((SELECT min(events_seen) FROM projection_generations WHERE state = 'active'), 0)::bigint AS applied
  `);
  return Number(row.head - row.applied);
}

/**
 * New events arrive (a second workspace is seeded) and the projector holding the projections is
 * SIGKILLed while it applies them: the standby takes every projection over, catches up, and the
 * read tables equal those a clean rebuild from the log gives.
 */
export async function projectorKill(deployment: Deployment, seed: number): Promise<ProjectorKillFigures> {
  const failures: string[] = [];
  const projectors = deployment.byRole('projector');
  const total = allProjections.length;
  const seeding = runCli(['seed', '--tenants', '1', '--seed', String(seed), '--scale', 'small'], deployment.env);
  // Kill mid-work: once the projector has started on the new events.
  const started = performance.now();
  while (performance.now() - started < 20_000 && (await lag(deployment.pool).catch(() => 0)) < 200) await sleep(50);
  let active: [ServiceProcess, number] | undefined;
  // A projector that lost its database in an earlier drill may still be taking its locks back.
  while (active === undefined && performance.now() - started < 30_000) {
    active = [...(await locksByProjector(deployment.pool, projectors)).entries()].sort((a, b) => b[1] - a[1])[0];
    if (active === undefined) await sleep(100);
  }
  if (active === undefined) throw new Error(`no projector holds a projection lock: ${JSON.stringify(await advisoryLocks(deployment.pool))}, proxies: ${JSON.stringify(projectors.map((p) => p.postgres.upstreamPorts()))}`);
  const [victim, projectionsHeld] = active;
  const lagAtKill = await lag(deployment.pool);
  const killedAt = performance.now();
  victim.child?.kill('SIGKILL');
  const standby = projectors.find((p) => p !== victim);
  if (standby === undefined) throw new Error('no standby projector');

  let takeoverMs: number | null = null;
  while (performance.now() - killedAt < 30_000) {
    if (((await locksByProjector(deployment.pool, [standby])).get(standby) ?? 0) >= total) {
      takeoverMs = Math.round(performance.now() - killedAt);
      break;
    }
    await sleep(100);
  }
  const seeded = await seeding;
  if (seeded.code !== 0) failures.push(`seeding the second workspace failed: ${seeded.stderr.slice(0, 300)}`);
  const waited = await runCli(['projections', 'wait', '--timeout', '120'], deployment.env);
  const caughtUpMs = waited.code === 0 ? Math.round(performance.now() - killedAt) : null;
  if (takeoverMs === null || takeoverMs > takeoverBoundMs) failures.push(`the standby took over in ${String(takeoverMs)} ms (bound ${takeoverBoundMs} ms)`);
  if (caughtUpMs === null) failures.push(`projections did not catch up: ${waited.stderr.slice(0, 300)}`);

  const live = await readModelDigests(deployment.pool, allProjections);
  const replayed = await runCli(['projections', 'replay'], deployment.env, 600_000);
  if (replayed.code !== 0) failures.push(`the clean rebuild failed: ${replayed.stderr.slice(0, 300)}`);
  const rebuilt = await readModelDigests(deployment.pool, allProjections);
  const tablesDiffering = Object.keys(live).filter((table) => live[table] !== rebuilt[table]);
  if (tablesDiffering.length > 0) failures.push(`read tables differ from a clean rebuild: ${tablesDiffering.join(', ')}`);

  // Back to two projectors for what follows.
  await deployment.start(victim);
  return { killed: victim.name, projectionsHeld, lagAtKill, takeoverMs, caughtUpMs, tablesCompared: Object.keys(live).length, tablesDiffering, failures };
}
