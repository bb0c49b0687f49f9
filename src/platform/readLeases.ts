import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { commitLocally } from './db.js';
import { sql } from './sql.js';

/**
 * Read leases (migration 0014, docs/operators.md "High availability"). A router reads from a
 * standby only within a lease it recorded on the primary; a change of who may read, once
 * committed, waits until every standby under a live lease has replayed it (`awaitLeasedStandbys`).
 * The primary's clock alone decides whether a lease is live; the router ends its own use of the
 * lease by its monotonic clock, started before the lease was written, so always before the primary
 * counts the lease as ended.
 */

const lsnRow = z.object({ lsn: z.string() });

/** Records (or renews) a lease of `leaseMs` on `standbyName`; returns the primary's WAL position after its commit. */
export async function recordReadLease(primary: DatabasePool, routerId: string, standbyName: string, leaseMs: number): Promise<bigint> {
  await primary.transaction(async (transaction) => {
    // The row matters on this primary only: a lease outlives no failover (see the docs).
    await commitLocally(transaction);
    await transaction.query(sql.typeAlias('void')`
      INSERT INTO read_leases (router_id, standby_name, until)
      VALUES (${routerId}, ${standbyName}, now() + ${leaseMs} * interval '1 millisecond')
      ON CONFLICT (router_id, standby_name) DO UPDATE SET until = excluded.until
    `);
  });
  // After the commit: whatever committed before any revoker could miss this lease is at or before it.
  return BigInt(await primary.oneFirst(sql.type(lsnRow)`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS lsn`));
}

/** Ends one lease early: the router has stopped routing reads to the standby (it went down or fell behind), so revocations need not wait for it. */
export async function releaseReadLease(primary: DatabasePool, routerId: string, standbyName: string): Promise<void> {
  // Locally: the standby given back may be the synchronous one that just went down.
  await primary.transaction(async (transaction) => {
    await commitLocally(transaction);
    await transaction.query(sql.typeAlias('void')`DELETE FROM read_leases WHERE router_id = ${routerId} AND standby_name = ${standbyName}`);
  });
}

/** Ends the router's leases (at its close) and forgets leases ended long ago. */
export async function endReadLeases(primary: DatabasePool, routerId: string): Promise<void> {
  await primary.transaction(async (transaction) => {
    await commitLocally(transaction);
    await transaction.query(sql.typeAlias('void')`
      DELETE FROM read_leases WHERE router_id = ${routerId} OR until < now() - interval '1 hour'
    `);
  });
}

const waitingRow = z.object({ waiting: z.number() });

/** How often the revoker looks at the standbys' replay while it waits. */
const replayPollMs = 10;

/**
 * After a commit that changes who may read: waits until every standby with a live read lease has
 * replayed the WAL up to now (the primary's position after the commit), each leased standby found
 * by its name in pg_stat_replication; a lease that ends meanwhile stops counting. Without standbys
 * (no lease was ever recorded) it is one statement.
 */
export async function awaitLeasedStandbys(primary: CommonQueryMethods, options: { signal?: AbortSignal } = {}): Promise<void> {
  const target = await primary.oneFirst(sql.type(lsnRow)`SELECT pg_current_wal_lsn()::text AS lsn`);
  for (;;) {
    const waiting = await primary.oneFirst(sql.type(waitingRow)`
      SELECT count(*)::int AS waiting FROM read_leases AS lease
      WHERE lease.until > now()
        AND NOT EXISTS (
          SELECT FROM pg_stat_replication AS replica
          WHERE replica.application_name = lease.standby_name AND replica.replay_lsn >= ${target}::pg_lsn
        )
    `);
    if (waiting === 0) return;
    options.signal?.throwIfAborted();
    await new Promise((resolve) => setTimeout(resolve, replayPollMs));
  }
}
