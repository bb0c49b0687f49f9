import { createHash } from 'node:crypto';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { sql } from '../platform/sql.js';

/**
 * Session advisory locks, one per projection, held on one dedicated connection for as long as the
 * holder runs: the projection's active projector is whoever holds its lock. When the process dies
 * its connection closes, the server releases the locks, and a standby takes them on its next try.
 * The locks keep projectors from doing the same work; correctness comes from the checkpoints'
 * compare-and-set.
 */
export type ProjectionLocks = {
  readonly held: ReadonlySet<string>;
  /** Tries to take the locks of these projections; returns the ones newly taken. */
  tryAcquire(names: readonly string[]): Promise<string[]>;
};

/** Who holds a projection's lock: its projector, or a replay rebuilding it. */
type LockPurpose = 'projector' | 'replay';

/** A stable 63-bit key per name, for pg_try_advisory_lock(bigint). */
export function advisoryKey(name: string): bigint {
  return createHash('sha256').update(`supply-api:${name}`).digest().readBigInt64BE(0);
}

function lockKey(purpose: LockPurpose, projection: string): bigint {
  return advisoryKey(`${purpose}:${projection}`);
}

/**
 * The projections among `names` whose `purpose` lock some session of this database holds now
 * (pg_locks: a bigint advisory key is split over classid and objid).
 */
export async function heldProjectionLocks(db: CommonQueryMethods, purpose: LockPurpose, names: readonly string[]): Promise<Set<string>> {
  const keys = await db.anyFirst(sql.type(z.object({ key: z.bigint() }))`
    SELECT (l.classid::int8 << 32) | l.objid::int8 AS key
    FROM pg_locks AS l
    WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  `);
  return new Set(names.filter((name) => keys.includes(lockKey(purpose, name))));
}

type Command = { readonly names: readonly string[]; readonly resolve: (taken: string[]) => void; readonly reject: (error: unknown) => void };

/**
 * Runs `body` with a lock holder bound to one pooled connection. The locks are released when
 * `body` settles; if the connection fails, `body`'s signal aborts and the error is rethrown.
 */
export async function withProjectionLocks<T>(
  pool: DatabasePool,
  body: (locks: ProjectionLocks, signal: AbortSignal) => Promise<T>,
  purpose: LockPurpose = 'projector',
): Promise<T> {
  const held = new Set<string>();
  const queue: Command[] = [];
  let wake: (() => void) | undefined;
  let finished = false;
  const lost = new AbortController();

  const tryAcquire = (names: readonly string[]) =>
    new Promise<string[]>((resolve, reject) => {
      if (finished || lost.signal.aborted) {
        reject(new Error('the projection lock connection is closed'));
        return;
      }
      queue.push({ names, resolve, reject });
      wake?.();
    });

  let bodyResult: { value: T } | { error: unknown } | undefined;
  await pool.connect(async (connection) => {
    const serve = (async () => {
      while (!finished) {
        const command = queue.shift();
        if (!command) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        try {
          const taken: string[] = [];
          for (const name of command.names) {
            if (held.has(name)) continue;
            const got = await connection.oneFirst(sql.type(z.object({ got: z.boolean() }))`
              SELECT pg_try_advisory_lock(${lockKey(purpose, name)}) AS got
            `);
            if (got) {
              held.add(name);
              taken.push(name);
            }
          }
          command.resolve(taken);
        } catch (error) {
          command.reject(error);
          lost.abort(error);
          throw error;
        }
      }
    })();
    // Its failure reaches the body through `lost` and the commands, and is awaited below; handled
    // now, so that a lock connection lost while the body runs does not end the process.
    serve.catch(() => undefined);
    try {
      bodyResult = { value: await body({ held, tryAcquire }, lost.signal) };
    } catch (error) {
      bodyResult = { error };
    } finally {
      finished = true;
      wake?.();
      for (const command of queue.splice(0)) command.reject(new Error('the projection lock holder has stopped'));
    }
    await serve.catch(() => undefined);
    if (!lost.signal.aborted && held.size > 0) {
      await connection.query(sql.typeAlias('void')`SELECT FROM pg_advisory_unlock_all()`);
    }
  });
  if (bodyResult === undefined) throw new Error('projection lock holder ended without a result');
  if ('error' in bodyResult) throw bodyResult.error;
  return bodyResult.value;
}
