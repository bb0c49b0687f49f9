import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually } from '../../test/support/eventually.js';
import { sentinelClusterUnavailable, startSentinelCluster, type SentinelCluster } from '../../test/support/sentinelCluster.js';
import { createRedisClient } from './redisConnection.js';

const inCi = process.env.CI === 'true' || process.env.CI === '1';
const unavailable = sentinelClusterUnavailable();
if (unavailable !== undefined && !inCi) process.stderr.write(`\n[tests] Redis Sentinel skipped: ${unavailable}\n`);

/** What ioredis's failover detector does on +switch-master: it closes the Sentinel connector. */
type WithConnector = { connector: { disconnect(): void } };

describe.runIf(inCi || unavailable === undefined)('a Redis client through Sentinel', () => {
  let cluster: SentinelCluster;
  beforeAll(async () => {
    cluster = await startSentinelCluster();
  });
  afterAll(async () => {
    await cluster?.close();
  });

  test('ended by ioredis while it asks the Sentinels for the master (the failover detector closing the attempt), it connects again', async () => {
    const client = createRedisClient(cluster.url, { enableOfflineQueue: false, connectTimeout: 1000, maxRetriesPerRequest: 1, retryStrategy: () => 100 });
    client.on('error', () => undefined);
    try {
      await eventually(() => expect(client.status).toBe('ready'));
      const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
      // The next attempt is closed by its connector while it asks the Sentinels, as a +switch-master does.
      client.once('connecting', () => setImmediate(() => (client as unknown as WithConnector).connector.disconnect()));
      client.disconnect(true);
      await ended;
      await eventually(() => expect(client.status).toBe('ready'));
      expect(await client.ping()).toBe('PONG');
    } finally {
      client.disconnect();
    }
  });
});
