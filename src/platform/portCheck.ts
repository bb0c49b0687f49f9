import net from 'node:net';
import { StartupError } from './startupErrors.js';

/**
 * Fails at once, naming the way out, when the HTTP port cannot be bound: checked before the
 * database is migrated and the projector and worker start, so that a busy port costs nothing.
 * `holder` may say who holds it (e.g. the supply-api of the same DATA_DIR).
 */
export async function checkPortFree(port: number, holder?: () => Promise<string | undefined>): Promise<void> {
  if (port === 0) return;
  const failure = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error));
    probe.listen(port, () => probe.close(() => resolve(undefined)));
  });
  if (failure !== undefined) throw await portError(port, failure, holder);
}

/** The StartupError of a port that cannot be bound (from the check, or from the real listen). */
export async function portError(port: number, error: NodeJS.ErrnoException, holder?: () => Promise<string | undefined>): Promise<Error> {
  if (error.code === 'EADDRINUSE') {
    const who = (await holder?.().catch(() => undefined)) ?? 'another process';
    return new StartupError(`port ${port} is already in use by ${who}: stop it, or choose another port with --port N or PORT=N`, { cause: error });
  }
  if (error.code === 'EACCES') {
    return new StartupError(`port ${port} needs privileges this process does not have: choose a port above 1023 with --port N or PORT=N`, { cause: error });
  }
  return error;
}
