/** What the watcher knows of one standby at one poll: everything the choice to read from it rests on. */
export type StandbyObservation = {
  readonly reachable: boolean;
  /** Why the standby did not answer (when it did not). */
  readonly failure?: string;
  readonly recovering: boolean;
  /** Its name in the primary's pg_stat_replication; null when it has none. */
  readonly replicationName: string | null;
  /** The primary answered this poll. */
  readonly primaryAnswers: boolean;
  /** The primary's pg_stat_replication row of it (absent: not streaming from the primary). */
  readonly syncState: string | null | undefined;
  /** Confirmed synchronous for `confirmPolls` polls in a row. */
  readonly synchronous: boolean;
  readonly lagMs: number | null;
  readonly maxLagMs: number;
  /** It holds a live read lease (by the router's own clock). */
  readonly leased: boolean;
  /** It served reads at the last poll at which the primary answered (reads through the primary's outage). */
  readonly servedBefore: boolean;
  readonly replay: bigint | undefined;
  /** The primary's position after the lease was first recorded: replayed, nothing a revoker could have missed is unapplied. */
  readonly fence: bigint | undefined;
};

/**
 * Why a standby serves no reads, or undefined when it does: a pure function of one observation.
 * While the primary does not answer, a standby that served reads until then goes on doing so for
 * the rest of its lease, also once it has been promoted (its lease is on the new primary, whose
 * revocations wait for it or, on the standby promoted, need no wait).
 */
export function standbyReason(o: StandbyObservation): string | undefined {
  if (!o.reachable) return `unreachable (${o.failure ?? 'no answer'})`;
  if (!o.recovering) {
    // Promoted while this router read from it under its lease, the watcher not yet on the new
    // primary: it is the primary now, and its reads see its own commits.
    return !o.primaryAnswers && o.servedBefore && o.leased ? undefined : 'not a standby (not in recovery)';
  }
  if (o.replicationName === null) return 'has no name for replication (application_name of its WAL receiver, or cluster_name)';
  if (!o.primaryAnswers) {
    return o.servedBefore && o.leased ? undefined : 'the primary does not answer the watcher (and the standby holds no lease from before)';
  }
  if (o.syncState === undefined) return `not streaming from the primary (no "${o.replicationName}" in pg_stat_replication)`;
  if (!o.synchronous) return `not a synchronous standby of the primary (${o.syncState ?? 'unknown'}; see synchronous_standby_names)`;
  if (o.lagMs === null || o.lagMs > o.maxLagMs) return `behind: replay lag ${o.lagMs ?? '?'} ms over READ_REPLICA_MAX_LAG_MS ${o.maxLagMs}`;
  if (!o.leased) return 'no read lease recorded on the primary yet';
  if (o.fence === undefined || o.replay === undefined || o.replay < o.fence) return 'catching up with what committed before its lease';
  return undefined;
}

/** Whether the router should hold a lease on the standby: all is well but the lease itself. */
export function wantsLease(o: StandbyObservation): boolean {
  return o.primaryAnswers && standbyReason({ ...o, leased: true, fence: 0n, replay: o.replay ?? 0n }) === undefined;
}

