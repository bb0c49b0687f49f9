import type { DatabasePool } from 'slonik';
import type { Config } from '../config/config.js';
import { createDatabasePool, requestPoolTimeouts, type DatabaseKind } from '../platform/db.js';
import type { Logger } from '../platform/logger.js';
import { createProjectionReader, type ProjectionReader } from '../platform/projectionReader.js';
import { createReadRouter, primaryOnlyRouter, replicaTiming, serverLabel, type ReadRoute, type ReadRouter, type ReplicaEndpoint } from '../platform/readReplicas.js';

/** The watcher's own connections: one each, answering within the poll's bound or counted as down. */
const monitorTimeouts = {
  statementMs: replicaTiming.pollTimeoutMs,
  queryMs: replicaTiming.pollTimeoutMs + 500,
  connectionMs: replicaTiming.pollTimeoutMs,
} as const;

export type RequestPools = { readonly db: DatabasePool; readonly reads: ProjectionReader };

/** The request pools of one database: a slonik pool and the hot reads' reader, both bounded. */
export async function openRequestPools(
  connectionUri: string,
  kind: DatabaseKind,
  logger: Logger,
  options: { validateRows: boolean },
): Promise<RequestPools> {
  const db = await createDatabasePool(connectionUri, kind === 'pglite' ? 2 : 5, kind, { resetOnRelease: false, timeouts: requestPoolTimeouts });
  const reads = createProjectionReader(connectionUri, {
    kind,
    maximumPoolSize: kind === 'pglite' ? 2 : 10,
    logger,
    validateRows: options.validateRows,
    timeouts: requestPoolTimeouts,
  });
  return { db, reads };
}

/**
 * The read router of an API process: every read on the primary without READ_DATABASE_URL;
 * otherwise request pools and a watcher connection per standby, and one watcher connection to
 * the primary, which records the read leases (and keeps synchronous_standby_names in step when
 * READ_REPLICA_STEWARD is on).
 */
export async function composeReadRouter(
  config: Config,
  logger: Logger,
  primary: { readonly connectionUri: string; readonly pools: RequestPools },
  options: { validateRows: boolean },
): Promise<ReadRouter> {
  const primaryRoute: ReadRoute = { name: 'primary', standby: false, db: primary.pools.db, reads: primary.pools.reads };
  if (config.readDatabaseUrls.length === 0) return primaryOnlyRouter(primaryRoute);
  const standbys: ReplicaEndpoint[] = [];
  for (const url of config.readDatabaseUrls) {
    const pools = await openRequestPools(url, 'postgres', logger, options);
    const monitor = await createDatabasePool(url, 1, 'postgres', { resetOnRelease: false, timeouts: monitorTimeouts });
    const name = serverLabel(url);
    standbys.push({
      name,
      route: { name, standby: true, db: pools.db, reads: pools.reads },
      monitor,
      close: async () => {
        await pools.reads.close();
        await pools.db.end();
        await monitor.end();
      },
    });
  }
  const primaryMonitor = await createDatabasePool(primary.connectionUri, 1, 'postgres', { resetOnRelease: false, timeouts: monitorTimeouts });
  // Leases commit synchronously, without a server-side statement timeout (recordReadLease): on a
  // connection of their own, so that a commit waiting for a standby never holds up the watcher.
  const leaseWriter = await createDatabasePool(primary.connectionUri, 1, 'postgres', { resetOnRelease: false, timeouts: monitorTimeouts });
  const router = createReadRouter({
    primary: primaryRoute,
    primaryMonitor,
    leaseWriter,
    standbys,
    maxLagMs: config.readReplicaMaxLagMs,
    logger,
    steward: config.readReplicaSteward,
    leaseMs: config.readReplicaLeaseMs,
  });
  logger.info({ standbys: standbys.map((s) => s.name), maxLagMs: config.readReplicaMaxLagMs }, 'reads go to hot standbys when they are usable');
  return {
    ...router,
    close: async () => {
      await router.close();
      await leaseWriter.end();
      await primaryMonitor.end();
    },
  };
}
