import type { DatabasePool } from 'slonik';
import { defaultReadReplicaLeaseMs } from '../config/config.js';
import { z } from 'zod';
import type { Logger } from './logger.js';
import type { RowReader } from './projectionReader.js';
import { sql } from './sql.js';
import { randomUUID } from 'node:crypto';
import { endReadLeases, recordReadLease, releaseReadLease } from './readLeases.js';
import { standbyReason, wantsLease, type StandbyObservation } from './standbyReason.js';

/**
 * Where a request's reads go: the primary, or a hot standby of it. Writes never go through a
 * route's pools when it is a standby (a standby refuses them).
 */
export type ReadRoute = {
  /** `host:port/database` of the server (never credentials); `primary` for the primary. */
  readonly name: string;
  readonly standby: boolean;
  readonly db: DatabasePool;
  readonly reads: RowReader;
};

/** What /readyz and /metrics say about one standby. */
export type StandbyState = {
  /** `host:port/database` as in READ_DATABASE_URL (never credentials). */
  readonly standby: string;
  /** Its name in the primary's pg_stat_replication and synchronous_standby_names (its `cluster_name`). */
  readonly replicationName: string | null;
  readonly reachable: boolean;
  /** How far its replay is behind the primary, in milliseconds; null when unknown (unreachable). */
  readonly lagMs: number | null;
  /** Named by the primary's synchronous_standby_names and confirmed by it (sync or quorum). */
  readonly synchronous: boolean;
  readonly inUse: boolean;
  /** Why it serves no reads, when it does not. */
  readonly reason?: string;
};

/**
 * The rules of the router (see docs/operators.md, "Reading from hot standbys"):
 * - a standby serves reads only while the primary confirms it as a synchronous standby (so that a
 *   revocation committed with `synchronous_commit = remote_apply` has been applied on it before the
 *   commit returns), has done so for `confirmPolls` polls in a row, and its replay has reached the
 *   primary's position at the confirmation (what committed before it joined is applied too);
 * - its replay lag is at most `maxLagMs`, and both the primary and the standby answered the
 *   watcher within `freshMs`: otherwise reads go to another standby or to the primary;
 * - the steward (when the service's role may change synchronous_standby_names) removes a standby
 *   from the synchronous set only after every router has stopped reading from it
 *   (`removeAfterMs` of the same condition), and adds it back once it has caught up.
 */
export const replicaTiming = {
  pollMs: 250,
  /** A poll of one server that takes longer counts as unreachable. */
  pollTimeoutMs: 1000,
  /**
   * Observations older than this do not vouch for a standby: one poll's bound plus the pause between
   * polls and a little, so that a poll held up by a primary that does not answer (a failover) does
   * not age the standbys' observations past it.
   */
  freshMs: 1500,
  /** A read lease is renewed once this much of it has passed. */
  renewAfterMs: 3000,
  /** Reads stop going to a standby this long before its lease ends (a read routed just before starts within its lease). */
  leaseMarginMs: 1000,
  confirmPolls: 2,
  /** The steward removes a standby from the synchronous set once it has been down or behind this long. */
  removeAfterMs: 2000,
  /** The steward adds a standby back once its lag is at most this. */
  rejoinLagMs: 500,
} as const;

export type ReplicaEndpoint = {
  /** `host:port/database`, for logs, /readyz and metrics. */
  readonly name: string;
  /** The request pools of this standby. */
  readonly route: ReadRoute;
  /** A pool of one connection for the watcher (short timeouts). */
  readonly monitor: DatabasePool;
  close(): Promise<void>;
};

export type ReadRouter = {
  readonly primary: ReadRoute;
  /** Whether any standby is configured. */
  readonly replicated: boolean;
  /** The route of the next read: a usable standby (in turn), else the primary. */
  route(): ReadRoute;
  standbys(): readonly StandbyState[];
  /** Resolves once a poll that started after this call has ended (tests, drill). */
  nextPoll(): Promise<void>;
  close(): Promise<void>;
};

/** Every read on the primary: what the service does without READ_DATABASE_URL. */
export function primaryOnlyRouter(primary: ReadRoute): ReadRouter {
  return {
    primary,
    replicated: false,
    route: () => primary,
    standbys: () => [],
    nextPoll: async () => {},
    close: async () => {},
  };
}

const primaryRow = z.object({
  lsn: z.string(),
  senders: z.string(),
  synchronousStandbyNames: z.string(),
});
const senderSchema = z.array(z.object({ name: z.string().nullable(), syncState: z.string().nullable(), state: z.string().nullable() }));
const standbyRow = z.object({ recovering: z.boolean(), replay: z.string().nullable(), clusterName: z.string(), started: z.string() });

type Sample = { readonly at: number; readonly lsn: bigint };

type Watched = {
  readonly endpoint: ReplicaEndpoint;
  replicationName: string | null;
  /** Its postmaster's start (`pg_postmaster_start_time()`), recorded with its lease: tells the server apart once promoted. */
  started: string | null;
  reachable: boolean;
  recovering: boolean;
  replay: bigint | undefined;
  observedAt: number;
  lagMs: number | null;
  syncStreak: number;
  fence: bigint | undefined;
  synchronous: boolean;
  usable: boolean;
  reason: string | undefined;
  /** Since when (performance.now) the steward has seen it unconnected or behind; undefined while fine. */
  badSince: number | undefined;
  failure: string | undefined;
  /** The router's own end of its lease (performance.now); reads stop before it. */
  leaseEnds: number;
  /** When the lease was last recorded (performance.now). */
  leaseRenewedAt: number;
  /** The name its lease was recorded under (a promoted standby's name changes: it has no WAL receiver any more). */
  leaseName: string | undefined;
  syncState: string | null | undefined;
};

export type ReadRouterOptions = {
  readonly primary: ReadRoute;
  /** The watcher's connection to the primary (a pool of one, short timeouts). */
  readonly primaryMonitor: DatabasePool;
  /** The connection that records leases on the primary (no server-side statement timeout: see recordReadLease); default the watcher's. */
  readonly leaseWriter?: DatabasePool;
  readonly standbys: readonly ReplicaEndpoint[];
  readonly maxLagMs: number;
  readonly logger: Logger;
  /** Keeps the primary's synchronous_standby_names in step with the standbys (default false: an HA manager such as Patroni owns it). */
  readonly steward?: boolean;
  /** READ_REPLICA_LEASE_MS: how long one read lease lasts (long enough to read through a failover, see docs/operators.md). */
  readonly leaseMs?: number;
  /** This process's name in read_leases (default: random). */
  readonly routerId?: string;
  readonly timing?: Partial<typeof replicaTiming>;
};

/** A quoted name in synchronous_standby_names; names holding a double quote are not managed. */
const manageableName = /^[^"]{1,63}$/;

/** `ANY n ("a", "b")` as written by the steward, or '' (none). */
export function synchronousStandbyNames(names: readonly string[]): string {
  const sorted = [...new Set(names)].sort();
  return sorted.length === 0 ? '' : `ANY ${sorted.length} (${sorted.map((name) => `"${name}"`).join(', ')})`;
}

/** The names of a value the steward wrote (or ''), or undefined when an operator wrote another form. */
export function parseStewardNames(value: string): readonly string[] | undefined {
  const text = value.trim();
  if (text === '') return [];
  const match = /^ANY (\d+) \((.*)\)$/.exec(text);
  if (!match?.[2]) return undefined;
  const names = match[2].split(', ').map((quoted) => /^"([^"]+)"$/.exec(quoted)?.[1]);
  if (names.some((name) => name === undefined) || names.length !== Number(match[1])) return undefined;
  return names as string[];
}

/**
 * Watches the standbys (replay lag measured against the primary's WAL position over time, and
 * whether the primary confirms each as synchronous) and routes reads to those usable.
 */
export function createReadRouter(options: ReadRouterOptions): ReadRouter {
  const timing = { ...replicaTiming, ...options.timing };
  const { logger, maxLagMs, primary } = options;
  const watched: Watched[] = options.standbys.map((endpoint) => ({
    endpoint,
    replicationName: null,
    started: null,
    reachable: false,
    recovering: false,
    replay: undefined,
    observedAt: Number.NEGATIVE_INFINITY,
    lagMs: null,
    syncStreak: 0,
    fence: undefined,
    synchronous: false,
    usable: false,
    reason: 'not yet observed',
    badSince: undefined,
    failure: undefined,
    leaseEnds: Number.NEGATIVE_INFINITY,
    leaseRenewedAt: Number.NEGATIVE_INFINITY,
    leaseName: undefined,
    syncState: undefined,
  }));
  const leaseMs = options.leaseMs ?? defaultReadReplicaLeaseMs;
  const leaseWriter = options.leaseWriter ?? options.primaryMonitor;
  const routerId = options.routerId ?? `router-${randomUUID()}`;
  const leased = (standby: Watched, now: number): boolean => now < standby.leaseEnds - timing.leaseMarginMs;
  const samples: Sample[] = [];
  let primaryFailure: string | undefined;
  let usable: Watched[] = [];
  let turn = 0;
  let stewardOn = options.steward ?? false;
  let stewardNotice: string | undefined;
  const pollWaiters: (() => void)[] = [];
  const stopping = new AbortController();

  const lagOf = (replay: bigint, now: number): number => {
    const latest = samples.at(-1);
    if (latest === undefined) return Number.POSITIVE_INFINITY;
    if (replay >= latest.lsn) return 0;
    // The oldest sample holding WAL the standby has not replayed: it lacks what the primary had then.
    const missing = samples.find((sample) => sample.lsn > replay);
    return missing === undefined ? 0 : Math.max(0, Math.round(now - missing.at));
  };

  const withinTimeout = async <T>(work: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        work,
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timing.pollTimeoutMs} ms`)), timing.pollTimeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  };

  const pollPrimary = async (): Promise<{ senders: z.infer<typeof senderSchema>; synchronousStandbyNames: string } | undefined> => {
    const at = performance.now();
    try {
      const row = await withinTimeout(
        options.primaryMonitor.one(sql.type(primaryRow)`
          SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS lsn,
            coalesce((SELECT json_agg(json_build_object('name', application_name, 'syncState', sync_state, 'state', state))
                      FROM pg_stat_replication), '[]'::json)::text AS senders,
            current_setting('synchronous_standby_names') AS "synchronousStandbyNames"
        `),
      );
      samples.push({ at, lsn: BigInt(row.lsn) });
      // Kept long enough to measure any lag up to the bound and a little beyond.
      const horizon = at - (maxLagMs + timing.removeAfterMs + 10_000);
      while (samples.length > 2 && (samples[0]?.at ?? at) < horizon) samples.shift();
      if (primaryFailure !== undefined) logger.info('read replicas: the primary answers the watcher again');
      primaryFailure = undefined;
      return { senders: senderSchema.parse(JSON.parse(row.senders)), synchronousStandbyNames: row.synchronousStandbyNames };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (primaryFailure === undefined) logger.warn({ err: error }, 'read replicas: the primary does not answer the watcher; reads stay on the primary');
      primaryFailure = message;
      return undefined;
    }
  };

  const pollStandby = async (standby: Watched): Promise<void> => {
    try {
      const row = await withinTimeout(
        standby.endpoint.monitor.one(sql.type(standbyRow)`
          SELECT pg_is_in_recovery() AS recovering,
            pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::text AS replay,
            coalesce(
              (SELECT coalesce(substring(conninfo FROM '(?:^| )application_name=([^ ]+)'), substring(conninfo FROM 'fallback_application_name=([^ ]+)'))
               FROM pg_stat_wal_receiver),
              current_setting('cluster_name')
            ) AS "clusterName",
            pg_postmaster_start_time()::text AS started
        `),
      );
      standby.reachable = true;
      standby.recovering = row.recovering;
      standby.replay = row.replay === null ? undefined : BigInt(row.replay);
      standby.replicationName = row.clusterName === '' ? null : row.clusterName;
      standby.started = row.started;
      standby.observedAt = performance.now();
      if (standby.failure !== undefined) logger.info({ standby: standby.endpoint.name }, 'read replicas: the standby answers again');
      standby.failure = undefined;
    } catch (error) {
      standby.reachable = false;
      standby.replay = undefined;
      if (standby.failure === undefined) logger.warn({ standby: standby.endpoint.name, err: error }, 'read replicas: the standby does not answer; its reads go elsewhere');
      standby.failure = error instanceof Error ? error.message : String(error);
    }
  };

  const observe = (standby: Watched, primaryView: Awaited<ReturnType<typeof pollPrimary>>, now: number): StandbyObservation => ({
    reachable: standby.reachable,
    ...(standby.failure === undefined ? {} : { failure: standby.failure }),
    recovering: standby.recovering,
    replicationName: standby.replicationName,
    primaryAnswers: primaryView !== undefined,
    syncState: standby.syncState,
    synchronous: standby.synchronous,
    lagMs: standby.lagMs,
    maxLagMs,
    leased: leased(standby, now),
    servedBefore: standby.usable,
    replay: standby.replay,
    fence: standby.fence,
  });

  const judge = (primaryView: Awaited<ReturnType<typeof pollPrimary>>): void => {
    const now = performance.now();
    for (const standby of watched) {
      const sender = primaryView?.senders.find((s) => standby.replicationName !== null && s.name === standby.replicationName);
      const confirmed = sender !== undefined && (sender.syncState === 'sync' || sender.syncState === 'quorum');
      if (primaryView !== undefined) {
        standby.syncStreak = confirmed ? standby.syncStreak + 1 : 0;
        standby.syncState = sender === undefined ? undefined : sender.syncState;
        standby.lagMs = standby.reachable && standby.replay !== undefined ? lagOf(standby.replay, now) : null;
      } else {
        // Unobserved, the synchronous set may change (or a new primary come): confirmed afresh once it answers.
        standby.syncStreak = 0;
        if (!standby.reachable) standby.lagMs = null;
      }
      standby.synchronous = standby.syncStreak >= timing.confirmPolls;
      // A lease that lapsed starts afresh: its next fence is taken when it is recorded again.
      if (!leased(standby, now)) standby.fence = undefined;
      const reason = standbyReason(observe(standby, primaryView, now));
      const wasUsable = standby.usable;
      standby.usable = reason === undefined;
      standby.reason = reason;
      if (wasUsable !== standby.usable) {
        if (standby.usable) logger.info({ standby: standby.endpoint.name, lagMs: standby.lagMs }, 'read replicas: the standby serves reads');
        else logger.warn({ standby: standby.endpoint.name, reason }, 'read replicas: the standby serves no reads');
      }
      // The steward's view: down (not streaming) or behind, since when.
      const lag = standby.lagMs;
      const bad = primaryView !== undefined && (sender === undefined || (lag !== null && lag > maxLagMs));
      standby.badSince = bad ? (standby.badSince ?? now) : undefined;
    }
    usable = watched.filter((standby) => standby.usable);
  };

  /** Records or renews the lease of each standby that is fit to serve reads; lets the others lapse. */
  const renewLeases = async (primaryView: Awaited<ReturnType<typeof pollPrimary>>): Promise<void> => {
    const now = performance.now();
    await Promise.all(
      watched.map(async (standby) => {
        const name = standby.replicationName;
        if (name === null) return;
        if (!wantsLease(observe(standby, primaryView, now))) {
          if (standby.leaseEnds === Number.NEGATIVE_INFINITY) return;
          // No read is routed to it from here on; then the lease is given back, so that no revocation waits for a standby nobody reads.
          standby.leaseEnds = Number.NEGATIVE_INFINITY;
          standby.usable = false;
          usable = watched.filter((candidate) => candidate.usable);
          await withinTimeout(releaseReadLease(options.primaryMonitor, routerId, standby.leaseName ?? name)).catch((error: unknown) =>
            logger.warn({ standby: standby.endpoint.name, err: error }, 'read replicas: could not give back a read lease (it ends by itself)'),
          );
          return;
        }
        if (leased(standby, now) && now - standby.leaseRenewedAt < timing.renewAfterMs) return;
        const started = performance.now();
        try {
          // Counted only once its commit is acknowledged (flushed on the synchronous standbys, so on any server a failover may promote).
          const position = await withinTimeout(recordReadLease(leaseWriter, routerId, { name, started: standby.started }, leaseMs));
          const fresh = !leased(standby, performance.now());
          standby.leaseEnds = started + leaseMs;
          standby.leaseRenewedAt = started;
          standby.leaseName = name;
          if (fresh || standby.fence === undefined) standby.fence = position;
        } catch (error) {
          logger.warn({ standby: standby.endpoint.name, err: error }, 'read replicas: could not record a read lease on the primary');
        }
      }),
    );
  };

  const steward = async (primaryView: NonNullable<Awaited<ReturnType<typeof pollPrimary>>>): Promise<void> => {
    if (!stewardOn) return;
    const current = parseStewardNames(primaryView.synchronousStandbyNames);
    if (current === undefined) {
      const notice = `synchronous_standby_names is "${primaryView.synchronousStandbyNames}", not of the form the service writes; it is left to the operator`;
      if (stewardNotice !== notice) logger.warn(notice);
      stewardNotice = notice;
      return;
    }
    stewardNotice = undefined;
    const now = performance.now();
    const desired = new Set(current);
    for (const standby of watched) {
      const name = standby.replicationName;
      if (name === null || !manageableName.test(name)) continue;
      const sender = primaryView.senders.find((s) => s.name === name);
      if (desired.has(name)) {
        if (standby.badSince !== undefined && now - standby.badSince >= timing.removeAfterMs) desired.delete(name);
      } else if (sender?.state === 'streaming' && standby.reachable && standby.lagMs !== null && standby.lagMs <= Math.min(timing.rejoinLagMs, maxLagMs)) {
        desired.add(name);
      }
    }
    const next = synchronousStandbyNames([...desired]);
    if (next === synchronousStandbyNames(current)) return;
    try {
      await options.primaryMonitor.query(sql.typeAlias('void')`ALTER SYSTEM SET synchronous_standby_names = ${sql.literalValue(next)}`);
      await options.primaryMonitor.query(sql.typeAlias('void')`SELECT FROM pg_reload_conf()`);
      logger.warn({ from: primaryView.synchronousStandbyNames, to: next }, 'read replicas: synchronous_standby_names changed');
    } catch (error) {
      stewardOn = false;
      logger.warn(
        { err: error },
        'read replicas: may not change synchronous_standby_names (needs ALTER SYSTEM on it and pg_reload_conf); the operator keeps it in step with the standbys',
      );
    }
  };

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      const started = performance.now();
      const waiting = pollWaiters.splice(0);
      // At once: a primary that does not answer (up to the poll's bound) does not age the standbys' observations.
      const [primaryView] = await Promise.all([pollPrimary(), ...watched.map(pollStandby)]);
      if (primaryView !== undefined) await renewLeases(primaryView);
      judge(primaryView);
      if (primaryView !== undefined) await steward(primaryView).catch((error: unknown) => logger.warn({ err: error }, 'read replicas: steward failed'));
      for (const resolve of waiting) resolve();
      const rest = timing.pollMs - (performance.now() - started);
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest)).catch(() => undefined);
    }
  })();

  // The primary's own freshness is not needed: the lease bounds how long a standby serves without it.
  const fresh = (standby: Watched, now: number): boolean => now - standby.observedAt <= timing.freshMs && leased(standby, now);

  return {
    primary,
    replicated: watched.length > 0,
    route: () => {
      if (usable.length === 0) return primary;
      const now = performance.now();
      for (let i = 0; i < usable.length; i += 1) {
        turn = (turn + 1) % usable.length;
        const candidate = usable[turn];
        if (candidate !== undefined && fresh(candidate, now)) return candidate.endpoint.route;
      }
      return primary;
    },
    standbys: () => {
      const now = performance.now();
      return watched.map((standby) => {
        const inUse = standby.usable && fresh(standby, now);
        return {
          standby: standby.endpoint.name,
          replicationName: standby.replicationName,
          reachable: standby.reachable,
          lagMs: standby.lagMs,
          synchronous: standby.synchronous,
          inUse,
          ...(inUse ? {} : { reason: standby.reason ?? 'the watcher has not observed it lately' }),
        };
      });
    },
    nextPoll: () => new Promise<void>((resolve) => pollWaiters.push(resolve)),
    close: async () => {
      stopping.abort();
      await loop;
      if (watched.length > 0) await withinTimeout(endReadLeases(options.primaryMonitor, routerId)).catch(() => undefined);
      await Promise.all(watched.map((standby) => standby.endpoint.close()));
    },
  };
}

/** `host:port/database` of a connection URL: how a standby is named outside the process (never its credentials). */
export function serverLabel(connectionUri: string): string {
  const url = new URL(connectionUri);
  return `${url.hostname}:${url.port === '' ? '5432' : url.port}${url.pathname === '' ? '/' : url.pathname}`;
}
