import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { waitFor } from './waitFor.js';

export const cliPath = fileURLToPath(new URL('../../bin/supply-api.js', import.meta.url));

export type CliResult = { code: number | null; stdout: string; stderr: string };

/** Runs `supply-api …` as its own process, as an operator would. */
export function runCli(args: readonly string[], env: Record<string, string | undefined> = {}, timeoutMs = 120_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      env: cliEnvironment(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`supply-api ${args.join(' ')} did not finish in ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts a long-running `supply-api …` (serve); resolves once stderr shows `readyPattern`. */
export function startCli(
  args: readonly string[],
  env: Record<string, string | undefined>,
  readyPattern: RegExp,
  timeoutMs = 120_000,
): Promise<{ child: ChildProcess; output: () => string; stop: () => Promise<number | null> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { env: cliEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`supply-api ${args.join(' ')} was not ready in ${timeoutMs} ms; output: ${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (readyPattern.test(output)) {
        clearTimeout(timer);
        resolve({
          child,
          output: () => output,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null || child.signalCode !== null) {
                done(child.exitCode);
                return;
              }
              child.once('close', (code) => done(code));
              child.kill('SIGTERM');
            }),
        });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`supply-api ${args.join(' ')} exited with ${String(code)} before it was ready; output: ${output}`));
    });
  });
}

function cliEnvironment(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR };
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined) base[name] = value;
  }
  return base;
}

/** A live process and its descendants (/proc/PID/task/PID/children), the process first. */
export function processTree(pid: number): number[] {
  let children = '';
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8');
  } catch {
    return [];
  }
  return [pid, ...children.split(' ').filter((child) => child !== '').flatMap((child) => processTree(Number(child)))];
}

/**
 * Waits until every one of `pids` has stopped running (gone, or a zombie waiting to be reaped).
 * A SIGKILLed `projections replay` command takes its replay process with it (bin/replayHeap.js), a
 * moment later: until then the replay still holds its locks.
 */
export async function processesEnded(pids: readonly number[], timeoutMs = 10_000): Promise<void> {
  const running = (pid: number) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
    } catch {
      return false;
    }
  };
  await waitFor(`processes ${pids.join(', ')} to end`, timeoutMs, async () => !pids.some(running), 10);
}
