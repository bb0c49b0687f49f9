import { acceptsConnections } from '../../src/platform/tcpProbe.js';

export const testPostgresAdminUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const testRedisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export function isReachable(url: string, timeoutMs = 1500): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return acceptsConnections(hostname, Number(port), timeoutMs);
}

/** Set by the global set-up: whether real services can be used by this run. */
export const services = {
  postgres: process.env.TEST_SERVICE_POSTGRES === '1',
  redis: process.env.TEST_SERVICE_REDIS === '1',
  eventStoreDb: process.env.EVENTSTORE_URL !== undefined && process.env.EVENTSTORE_URL !== '',
};
