import { spawn } from 'node:child_process';
import os from 'node:os';
import type { DatabasePool } from 'slonik';
import { expect } from 'vitest';
import { z } from 'zod';
import { allProjections } from '../../projections/index.js';
import type { EventStore } from '../../src/eventStore/eventStore.js';
import { sql } from '../../src/platform/sql.js';
import { projectionsReport } from '../../src/projecting/status.js';
import { cliPath, processesEnded, processTree } from './cli.js';
import { eventually } from './eventually.js';

const buildingRow = z.object({ projection: z.string(), generation: z.number(), seen: z.bigint() });

/** The generations a replay is building (or a killed one left), with the events each has seen. */
export async function buildingGenerations(pool: DatabasePool) {
  return pool.any(sql.type(buildingRow)`
    SELECT projection, generation, events_seen AS seen FROM projection_generations WHERE state = 'building' ORDER BY projection
  `);
}

/**
 * Starts `supply-api projections replay` (batches of `batch`, a write every three batches) and
 * SIGKILLs it once the projections that have committed a write have all passed batch `killAt`;
 * returns the generations it left building.
 */
export async function killReplayAt(database: { pool: DatabasePool; url: string }, eventStore: EventStore, killAt: number, batch: number) {
  const { pool, url } = database;
  const child = spawn(process.execPath, [cliPath, 'projections', 'replay', '--parallel', '2', '--batch', String(batch), '--fold', String(3 * batch)], {
    env: { PATH: process.env.PATH, DATABASE_URL: url, DATA_DIR: os.tmpdir(), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Polled often: the moment it passes the batch is the moment to kill it.
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`the replay ended before batch ${killAt}: ${stderr.slice(-2000)}`);
    const committed = (await buildingGenerations(pool)).filter((g) => g.seen > 0n);
    const slowest = committed.reduce((min, g) => (g.seen < min ? g.seen : min), BigInt(Number.MAX_SAFE_INTEGER));
    if (committed.length === 0 || slowest < BigInt(killAt * batch)) throw new Error(`the replay has not passed batch ${killAt} yet`);
  }, { timeoutMs: 240_000, intervalMs: 5 });
  // While it runs, status says a replay is building each generation.
  const running = (await projectionsReport(pool, eventStore, allProjections)).projections.map((p) => p.building?.running);
  expect(running.every((r) => r === true), JSON.stringify(running)).toBe(true);
  const tree = processTree(child.pid ?? Number.NaN);
  child.kill('SIGKILL');
  // The command's replay process dies with it, a moment later; until then it holds the locks.
  await exited;
  await processesEnded(tree);
  // Killed: once Postgres has ended its sessions, status says what it left is not being built
  // any more (the next replay resumes it).
  const stillRunning = async () => (await projectionsReport(pool, eventStore, allProjections)).projections.map((p) => p.building?.running);
  await eventually(async () => expect(await stillRunning()).toEqual(allProjections.map(() => false)));
  return buildingGenerations(pool);
}
