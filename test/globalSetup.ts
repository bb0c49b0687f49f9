import { isReachable, testPostgresAdminUrl, testRedisUrl } from './support/services.js';
import { stopOwnClustersOfRun } from './support/ownCluster.js';
import { dropTestDatabases, dropTestDatabasesDetached, newRunDatabasePrefix } from './support/testDatabaseCleanup.js';

/**
 * Finds the real services. Under CI=true a missing Postgres or Redis fails the run instead of
 * letting the tests that need it skip. Names this run's test databases (TEST_DATABASE_PREFIX, read
 * by the workers) and drops whatever of them is left at the end, or when the run is interrupted
 * (SIGINT, SIGTERM): a test that is stopped half way never reaches its own clean-up.
 */
export default async function globalSetup(): Promise<(() => Promise<void>) | undefined> {
  const [postgres, redis] = await Promise.all([isReachable(testPostgresAdminUrl), isReachable(testRedisUrl)]);
  const inCi = process.env.CI === 'true' || process.env.CI === '1';
  const missing = [postgres ? undefined : `PostgreSQL at ${testPostgresAdminUrl}`, redis ? undefined : `Redis at ${testRedisUrl}`].filter(
    (entry): entry is string => entry !== undefined,
  );
  if (missing.length > 0) {
    if (inCi) {
      throw new Error(`CI=true and required services are unreachable: ${missing.join(', ')}`);
    }
    process.stderr.write(`\n[tests] not reachable, tests that need them are skipped: ${missing.join(', ')}\n`);
  }
  process.env.TEST_SERVICE_POSTGRES = postgres ? '1' : '0';
  process.env.TEST_SERVICE_REDIS = redis ? '1' : '0';
  if (!postgres) return undefined;

  const prefix = newRunDatabasePrefix();
  process.env.TEST_DATABASE_PREFIX = prefix;
  const interrupted = (signal: NodeJS.Signals) => {
    dropTestDatabasesDetached(testPostgresAdminUrl, prefix);
    // vitest exits on its own a moment after the signal; were it not listening, this listener
    // would have kept the process alive: then the signal's default ends it.
    setTimeout(() => {
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    }, 200).unref();
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  return async () => {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await dropTestDatabases(testPostgresAdminUrl, prefix);
    await stopOwnClustersOfRun(prefix);
  };
}
