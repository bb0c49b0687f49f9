import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { cliPath, processesEnded, processTree, runCli } from './support/cli.js';
import { eventually } from './support/eventually.js';

/** bin/replayHeap.js, plain JavaScript run before any TypeScript loader (its shape, as used here). */
type ReplayHeap = {
  replayHeapFlags: readonly string[];
  replayRelaunchArgs(argv: readonly string[], execArgv: readonly string[], env: Record<string, string | undefined>): string[] | undefined;
};
const { replayHeapFlags, replayRelaunchArgs } = (await import(new URL('../bin/replayHeap.js', import.meta.url).href)) as ReplayHeap;

const node = '/usr/bin/node';
const bin = '/repo/bin/supply-api.js';

describe('the replay runs in a process of its own with a young generation sized for it', () => {
  it('relaunches `projections replay` with the flag, the caller\'s node flags and every argument kept', () => {
    expect(replayRelaunchArgs([node, bin, 'projections', 'replay', '--batch', '5000'], ['--enable-source-maps'], {})).toEqual([
      '--enable-source-maps',
      '--max-semi-space-size=64',
      '--min-semi-space-size=64',
      bin,
      'projections',
      'replay',
      '--batch',
      '5000',
    ]);
    expect(replayHeapFlags).toEqual(['--max-semi-space-size=64', '--min-semi-space-size=64']);
  });

  it('runs every other command line in this process, and a replay already sized (by its caller or as the child)', () => {
    expect(replayRelaunchArgs([node, bin, 'serve', '--demo'], [], {})).toBeUndefined();
    expect(replayRelaunchArgs([node, bin, 'projections', 'status'], [], {})).toBeUndefined();
    expect(replayRelaunchArgs([node, bin, 'replay'], [], {})).toBeUndefined();
    expect(replayRelaunchArgs([node, bin, 'projections', 'replay'], ['--max-semi-space-size=16'], {})).toBeUndefined();
    expect(replayRelaunchArgs([node, bin, 'projections', 'replay'], [], { NODE_OPTIONS: '--max-old-space-size=4096 --max-semi-space-size=32' })).toBeUndefined();
    expect(replayRelaunchArgs([node, bin, 'projections', 'replay'], [], { SUPPLY_API_REPLAY_CHILD: '1' })).toBeUndefined();
    expect(replayRelaunchArgs([node, bin, 'projections', 'replay'], [], { NODE_OPTIONS: '--max-old-space-size=4096' })).toEqual(expect.arrayContaining([...replayHeapFlags]));
  });

  it('passes the exit code on, and the help of the command is the replay\'s own', async () => {
    const ran = await runCli(['projections', 'replay', '--batch', 'many'], { LOG_LEVEL: 'warn' });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/--batch/);
    const help = await runCli(['projections', 'replay', '--help'], { LOG_LEVEL: 'warn' });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/usage: supply-api projections replay/);
  });

  it('a SIGKILLed command takes its replay process with it; a SIGTERM is passed on and the command ends by it', async () => {
    // A database that accepts the connection and never answers: the replay's process stays, waiting on it.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
        const wrapper = spawn(process.execPath, [cliPath, 'projections', 'replay'], {
          env: { PATH: process.env.PATH, DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/none`, LOG_LEVEL: 'warn' },
          stdio: ['ignore', 'ignore', 'ignore'],
        });
        const exited = new Promise<NodeJS.Signals | null>((resolve) => wrapper.once('exit', (_code, ended) => resolve(ended)));
        const child = await childOf(wrapper.pid ?? Number.NaN);
        const connected = sockets.size;
        // The child has reached the database: the replay runs there, not in the command's process.
        await until(() => sockets.size > connected, `the replay process of the ${signal} run did not connect`);
        for (const flag of replayHeapFlags) expect(commandLine(child)).toContain(flag);
        wrapper.kill(signal);
        expect(await exited).toBe(signal);
        await processesEnded([child], 5000);
      }
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  }, 60_000);
});

async function until(condition: () => boolean, failure: string): Promise<void> {
  await eventually(() => {
    if (!condition()) throw new Error(failure);
  });
}

function commandLine(pid: number): string[] {
  return readText(`/proc/${pid}/cmdline`).split('\0');
}

function childOf(pid: number): Promise<number> {
  return eventually(() => {
    const child = processTree(pid)[1];
    if (child === undefined) throw new Error(`process ${pid} started no child`);
    return child;
  });
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
