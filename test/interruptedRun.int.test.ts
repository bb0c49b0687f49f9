import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createDatabasePool } from '../src/platform/db.js';
import { sql } from '../src/platform/sql.js';
import { eventually } from './support/eventually.js';
import { services, testPostgresAdminUrl, testRedisUrl } from './support/services.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const vitest = path.join(root, 'node_modules/vitest/vitest.mjs');
const fixtureConfig = path.join(root, 'test/fixtures/interruptedRun/vitest.config.ts');

async function existing(names: readonly string[]): Promise<readonly string[]> {
  const admin = await createDatabasePool(testPostgresAdminUrl, 1);
  try {
    return await admin.anyFirst(sql.type(z.object({ datname: z.string() }))`SELECT datname FROM pg_database WHERE datname = ANY(${sql.array([...names], 'text')})`);
  } finally {
    await admin.end();
  }
}

/** Polls `check` until it answers a value; `ms` bounds only a failure, which names what it waited for. */
function until<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  return eventually(
    async () => {
      const value = await check();
      if (value === undefined) throw new Error(`${what}: not within ${ms} ms`);
      return value;
    },
    { timeoutMs: ms, intervalMs: 200 },
  );
}

/**
 * `npm test` stopped half way (a terminal's Ctrl-C to the whole process group, or a CI runner's
 * SIGTERM to vitest alone) leaves no test database behind: a run of two files in two forked
 * workers, each holding a database of its own, is stopped, and both databases go.
 */
describe.runIf(services.postgres)('an interrupted test run', () => {
  test.each([
    ['SIGINT', 'the process group'],
    ['SIGTERM', 'vitest alone'],
  ] as const)('%s to %s: the databases its tests held are dropped', async (signal, target) => {
    const out = await mkdtemp(path.join(os.tmpdir(), 'supply-interrupted-'));
    const run = spawn(process.execPath, [vitest, 'run', '--config', fixtureConfig], {
      cwd: root,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, TEST_POSTGRES_URL: testPostgresAdminUrl, TEST_REDIS_URL: testRedisUrl, FIXTURE_OUT_DIR: out },
    });
    let output = '';
    run.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    run.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise((resolve) => run.once('exit', resolve));
    try {
      const names = await until(`both fixtures holding a database (output: ${output})`, 120_000, async () => {
        const files = await readdir(out);
        return files.length === 2 ? Promise.all(files.map((file) => readFile(path.join(out, file), 'utf8'))) : undefined;
      });
      expect(await existing(names)).toHaveLength(2);
      expect(names.every((name) => name.startsWith('supply_test_'))).toBe(true);

      const pid = run.pid;
      if (pid === undefined) throw new Error('vitest did not start');
      process.kill(target === 'the process group' ? -pid : pid, signal);
      await exited;
      await until('the interrupted run dropping its databases', 60_000, async () => ((await existing(names)).length === 0 ? true : undefined));
    } finally {
      if (run.exitCode === null && run.signalCode === null && run.pid !== undefined) process.kill(-run.pid, 'SIGKILL');
      await rm(out, { recursive: true, force: true });
    }
  }, 240_000);
});
