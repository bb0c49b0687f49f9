// `supply-api projections replay` runs in a child process whose V8 young generation is sized for a
// rebuild. A rebuild decodes a million events a few seconds, each a handful of objects that live
// for a batch or two: with V8's default semi-space (16 MB) most of them outlive a scavenge, are
// copied and promoted, and the garbage collector costs the command a tenth of its CPU (measured in
// docs/benchmarks.md). 64 MB from the start, because V8 otherwise begins with small semi-spaces
// and grows them as the heap fills, scavenging (and promoting) more often until they are grown.
// V8 reads these sizes only when the process starts (v8.setFlagsFromString afterwards leaves the
// heap as it is), hence a process of its own.
import { spawn } from 'node:child_process';

/** The young generation's semi-spaces: 64 MB, from the start. */
export const replayHeapFlags = ['--max-semi-space-size=64', '--min-semi-space-size=64'];
/** Set in the child: its parent is the wrapper, and the child must not outlive it. */
const relaunchedVariable = 'SUPPLY_API_REPLAY_CHILD';

/**
 * The node arguments of the child for a command line that is a replay and does not size the young
 * generation itself (a --max-semi-space-size of the caller's, in execArgv or NODE_OPTIONS, is
 * kept); undefined for every other command line.
 */
export function replayRelaunchArgs(argv, execArgv, env) {
  if (argv[2] !== 'projections' || argv[3] !== 'replay') return undefined;
  if (env[relaunchedVariable] !== undefined) return undefined;
  const sized = (flag) => flag.startsWith('--max-semi-space-size');
  if (execArgv.some(sized) || (env.NODE_OPTIONS ?? '').split(/\s+/).some(sized)) return undefined;
  return [...execArgv, ...replayHeapFlags, ...argv.slice(1)];
}

/**
 * Runs the command line again in a child with `args` and ends this process as the child ends (its
 * exit code, or the signal that ended it). The terminal is the child's (stdio inherited: the
 * progress bar still sees a TTY); SIGINT, SIGTERM and SIGHUP sent to this process are passed on;
 * and when this process dies without being able to pass anything on (SIGKILL), the child sees its
 * IPC channel close and kills itself at once, as if it had been killed: a replay killed by an
 * operator or a supervisor never goes on unseen, holding the replay's locks.
 */
export function relaunch(args) {
  const child = spawn(process.execPath, args, {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [relaunchedVariable]: '1' },
  });
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const forward = (signal) => child.kill(signal);
  for (const signal of signals) process.on(signal, forward);
  child.on('error', (error) => {
    process.stderr.write(`supply-api: could not start the replay process: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    for (const each of signals) process.off(each, forward);
    if (signal === null) process.exit(code ?? 1);
    // Ended by a signal: this process ends by the same one (its default action), as a shell expects.
    process.kill(process.pid, signal);
  });
}

/** In the child: dies with its parent (the IPC channel closes when the parent is gone, SIGKILL included). */
export function followParent(env) {
  if (env[relaunchedVariable] === undefined || process.channel === undefined) return;
  process.channel.unref();
  process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
}
