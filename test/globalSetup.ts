import { isReachable, testPostgresAdminUrl, testRedisUrl } from './support/services.js';

/**
 * Finds the real services. Under CI=true a missing Postgres or Redis fails the run instead of
 * letting the tests that need it skip.
 */
export default async function globalSetup(): Promise<void> {
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
}
