import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { commitLocally } from './db.js';
import { sql } from './sql.js';

/**
 * Read leases (migrations 0014 and 0015, docs/operators.md "High availability"). A router reads
 * from a standby only within a lease it recorded on the primary; a change of who may read, once
 * committed, waits until every standby under a live lease has replayed it (`awaitLeasedStandbys`).
 * A lease is committed synchronously (flushed on the synchronous standbys before it counts), so a
 * failover promotes a server that holds it: the new primary's revocations wait for it too. The
 * router ends its own use of a lease by its monotonic clock, started before the lease was written,
 * 1 s before the lease's length; the revoker counts a lease live `leaseClockAllowanceMs` past its
 * `until`, for the clocks of an old and a new primary that differ.
 */

const lsnRow = z.object({ lsn: z.string() });

/** How much a new primary's clock may run ahead of the old primary's (which wrote `until`) without a lease ending early. */
export const leaseClockAllowanceMs = 2000;

/** The standby a lease is on: its name in pg_stat_replication, and its postmaster's start (`pg_postmaster_start_time()` as text), which tells the server apart once it is promoted. */
export type LeasedStandby = { readonly name: string; readonly started: string | null };

/**
 * Records (or renews) a lease of `leaseMs` on the standby; returns the primary's WAL position after
 * its commit. The commit waits until the synchronous standbys have flushed it
 * (`synchronous_commit = on`) and is never cancelled by a statement timeout: a wait cancelled by
 * one would return as a commit (with a warning) that no standby may have, and the router would
 * read under a lease a new primary does not know. A lease whose commit does not return in time is
 * not counted by the router.
 */
export async function recordReadLease(primary: DatabasePool, routerId: string, standby: LeasedStandby, leaseMs: number): Promise<bigint> {
  await primary.transaction(async (transaction) => {
    await transaction.query(sql.typeAlias('void')`SET LOCAL statement_timeout = 0`);
    await transaction.query(sql.typeAlias('void')`SET LOCAL synchronous_commit = on`);
    await transaction.query(sql.typeAlias('void')`
      INSERT INTO read_leases (router_id, standby_name, standby_started, until)
      VALUES (${routerId}, ${standby.name}, ${standby.started}::timestamptz, now() + ${leaseMs} * interval '1 millisecond')
      ON CONFLICT (router_id, standby_name) DO UPDATE SET until = excluded.until, standby_started = excluded.standby_started
    `);
  });
  // After the commit: whatever committed before any revoker could miss this lease is at or before it.
  return BigInt(await primary.oneFirst(sql.type(lsnRow)`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS lsn`));
}

/** Ends one lease early: the router has stopped routing reads to the standby (it went down or fell behind), so revocations need not wait for it. */
export async function releaseReadLease(primary: DatabasePool, routerId: string, standbyName: string): Promise<void> {
  // Locally: the standby given back may be the synchronous one that just went down. A release a
  // failover loses leaves the lease live on the new primary: revocations wait longer, never less.
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
 * by its name in pg_stat_replication; a lease that ends meanwhile stops counting. A lease on this
 * very server (a standby since promoted: same postmaster) needs no wait: its reads see this
 * primary's commits. Without standbys (no lease was ever recorded) it is one statement.
 */
export async function awaitLeasedStandbys(primary: CommonQueryMethods, options: { signal?: AbortSignal } = {}): Promise<void> {
  const target = await primary.oneFirst(sql.type(lsnRow)`SELECT pg_current_wal_lsn()::text AS lsn`);
  for (;;) {
    const waiting = await primary.oneFirst(sql.type(waitingRow)`
      SELECT count(*)::int AS waiting FROM read_leases AS lease
      WHERE lease.until + ${leaseClockAllowanceMs} * interval '1 millisecond' > clock_timestamp()
        AND lease.standby_started IS DISTINCT FROM pg_postmaster_start_time()
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
