import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { runCli, startCli, type CliResult } from './cli.js';
import { createPostgresTestDatabase, type TestDatabase } from './databases.js';

const seeded = z.object({ tenants: z.array(z.object({ workspaceId: z.string(), memberIds: z.array(z.string()).min(1) })).min(1) });

export type ServedService = {
  /** The port `serve --port 0` bound. */
  readonly port: number;
  /** The workspace the seed wrote, and its owner (who holds `integrations.manage`). */
  readonly workspaceId: string;
  readonly ownerId: string;
  /** Runs `supply-api …` against the same database and DATA_DIR. */
  cli(args: readonly string[]): Promise<CliResult>;
  /** The JSON a command printed on stdout; throws with its stderr when it failed. */
  cliJson(args: readonly string[]): Promise<unknown>;
  /** Everything `serve` has logged so far. */
  output(): string;
  stop(): Promise<void>;
};

/**
 * The service as an operator runs it: `supply-api serve --port 0` (the production composition,
 * nothing wired by a test) on a fresh Postgres database and DATA_DIR of its own, seeded by
 * `supply-api seed` with one small workspace, its read tables caught up before this resolves.
 */
export async function startServedService(options: { roles?: string; env?: Record<string, string> } = {}): Promise<ServedService> {
  const roles = options.roles ?? 'api,projector';
  let database: TestDatabase | undefined;
  let dataDir: string | undefined;
  let stopServe: (() => Promise<number | null>) | undefined;
  const stop = async () => {
    await stopServe?.();
    await database?.close();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  };
  try {
    database = await createPostgresTestDatabase({ migrated: false });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'supply-served-'));
    const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, LOG_LEVEL: 'info', ...options.env };
    const cli = (args: readonly string[]) => runCli(args, env);
    const cliJson = async (args: readonly string[]): Promise<unknown> => {
      const result = await cli(args);
      if (result.code !== 0) throw new Error(`supply-api ${args.join(' ')} exited with ${String(result.code)}: ${result.stderr}`);
      return JSON.parse(result.stdout) as unknown;
    };
    const [tenant] = seeded.parse(await cliJson(['seed', '--tenants', '1', '--days', '7', '--seed', '11', '--as-of', '2026-11-01'])).tenants;
    const ownerId = tenant?.memberIds[0];
    if (tenant === undefined || ownerId === undefined) throw new Error('the seed wrote no workspace');
    const listening = /"port":(\d+),"roles":\[[^\]]*\],"msg":"serving"/;
    const served = await startCli(['serve', '--port', '0', '--roles', roles], env, listening);
    stopServe = served.stop;
    const port = Number(listening.exec(served.output())?.[1]);
    if (roles.includes('projector')) {
      const waited = await cli(['projections', 'wait', '--timeout', '120']);
      if (waited.code !== 0) throw new Error(`the read tables did not catch up: ${waited.stderr}`);
    }
    return { port, workspaceId: tenant.workspaceId, ownerId, cli, cliJson, output: served.output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
