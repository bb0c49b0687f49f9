import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

describe('settings', () => {
  test('an empty environment gives the documented defaults, frozen', () => {
    const config = loadConfig({}, '/srv/app');
    expect(config).toEqual({
      port: 8080,
      databaseUrl: undefined,
      readDatabaseUrls: [],
      readReplicaMaxLagMs: 5000,
      readReplicaLeaseMs: 50_000,
      readReplicaSteward: false,
      eventStoreUrl: undefined,
      redisUrl: undefined,
      s3: undefined,
      publicBaseUrl: undefined,
      rateLimitPerMinute: 120,
      projectorBatchSize: 2000,
      errorTypeBase: 'https://problems.dental-supply.example/v1',
      logLevel: 'info',
      dataDir: '/srv/app/.data',
      signingSecret: undefined,
      analyticsCaps: { exceptions: 500, comparison: 1000, trend: 20_000, counts: 100_000, backlog: 100_000 },
      evidenceRetentionDays: 90,
      exportQueueName: 'supply-api-exports',
      exportConcurrency: 2,
      trustProxy: false,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  test('every setting is read and normalised', () => {
    const config = loadConfig(
      {
        PORT: '9090',
        DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/supply',
        READ_DATABASE_URL: 'postgres://postgres@10.0.0.2:5432/supply, postgresql://postgres@10.0.0.3:5432/supply',
        READ_REPLICA_MAX_LAG_MS: '2500',
        READ_REPLICA_LEASE_MS: '8000',
        READ_REPLICA_STEWARD: 'true',
        EVENTSTORE_URL: 'esdb://127.0.0.1:2113?tls=false',
        REDIS_URL: 'redis://127.0.0.1:6379',
        S3_BUCKET: 'supply-exports',
        S3_ENDPOINT: 'http://127.0.0.1:9000',
        S3_REGION: 'eu-west-1',
        S3_FORCE_PATH_STYLE: 'true',
        PUBLIC_BASE_URL: 'https://api.example.com/',
        RATE_LIMIT_PER_MINUTE: '600',
        PROJECTOR_BATCH_SIZE: '500',
        ERROR_TYPE_BASE: 'https://errors.example.com/v1/',
        LOG_LEVEL: 'debug',
        DATA_DIR: '/var/lib/supply',
        SIGNING_SECRET: 'x'.repeat(32),
        ANALYTICS_EXCEPTIONS_CAP: '20',
        ANALYTICS_COMPARISON_CAP: '30',
        ANALYTICS_TREND_CAP: '40',
        ANALYTICS_COUNT_CAP: '50',
        ANALYTICS_BACKLOG_CAP: '60',
        EVIDENCE_RETENTION_DAYS: '30',
        EXPORT_QUEUE_NAME: 'exports-eu',
        EXPORT_CONCURRENCY: '4',
        TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,::1,loopback',
      },
      '/srv/app',
    );
    expect(config).toMatchObject({
      port: 9090,
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/supply',
      readDatabaseUrls: ['postgres://postgres@10.0.0.2:5432/supply', 'postgresql://postgres@10.0.0.3:5432/supply'],
      readReplicaMaxLagMs: 2500,
      readReplicaLeaseMs: 8000,
      readReplicaSteward: true,
      eventStoreUrl: 'esdb://127.0.0.1:2113?tls=false',
      redisUrl: 'redis://127.0.0.1:6379',
      s3: { bucket: 'supply-exports', endpoint: 'http://127.0.0.1:9000', region: 'eu-west-1', forcePathStyle: true },
      publicBaseUrl: 'https://api.example.com',
      rateLimitPerMinute: 600,
      projectorBatchSize: 500,
      errorTypeBase: 'https://errors.example.com/v1',
      logLevel: 'debug',
      dataDir: '/var/lib/supply',
      analyticsCaps: { exceptions: 20, comparison: 30, trend: 40, counts: 50, backlog: 60 },
      evidenceRetentionDays: 30,
      exportQueueName: 'exports-eu',
      exportConcurrency: 4,
      trustProxy: ['10.0.0.0/8', '192.168.1.7', '::1', 'loopback'],
    });
  });

  test('TRUST_PROXY takes false, a number of hops, or proxy addresses and subnets', () => {
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: 'uniquelocal' }).trustProxy).toEqual(['uniquelocal']);
    expect(loadConfig({ TRUST_PROXY: 'fd00::/8' }).trustProxy).toEqual(['fd00::/8']);
  });

  test('empty strings count as absent', () => {
    expect(loadConfig({ DATABASE_URL: '', REDIS_URL: ' ', PORT: '' }).databaseUrl).toBeUndefined();
  });

  test.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['DATABASE_URL', 'not a url'],
    ['READ_DATABASE_URL', 'postgres://standby1/db,mysql://standby2/db'],
    ['READ_DATABASE_URL', ','],
    ['READ_REPLICA_MAX_LAG_MS', '50'],
    ['READ_REPLICA_MAX_LAG_MS', 'soon'],
    ['EVENTSTORE_URL', 'http://127.0.0.1:2113'],
    ['REDIS_URL', 'localhost:6379'],
    ['S3_BUCKET', 'Bad_Bucket'],
    ['EVIDENCE_RETENTION_DAYS', '0'],
    ['EXPORT_QUEUE_NAME', 'exports:eu'],
    ['EXPORT_CONCURRENCY', '0'],
    ['RATE_LIMIT_PER_MINUTE', '0'],
    ['RATE_LIMIT_PER_MINUTE', '1.5'],
    ['PROJECTOR_BATCH_SIZE', '0'],
    ['LOG_LEVEL', 'verbose'],
    ['S3_FORCE_PATH_STYLE', 'yes'],
    ['SIGNING_SECRET', 'short'],
    ['ANALYTICS_EXCEPTIONS_CAP', '0'],
    ['ANALYTICS_TREND_CAP', '200001'],
    ['ANALYTICS_COUNT_CAP', 'many'],
    ['TRUST_PROXY', 'true'],
    ['TRUST_PROXY', 'proxy.example.com'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['TRUST_PROXY', '10.0.0.1,'],
    ['TRUST_PROXY', '-1'],
  ])('a bad %s (%s) stops start-up with a message naming the setting', (setting, value) => {
    const attempt = () => loadConfig({ S3_BUCKET: 'supply-exports', [setting]: value });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(new RegExp(`^Invalid setting ${setting}: `));
  });

  test('READ_DATABASE_URL needs DATABASE_URL, and says so', () => {
    expect(() => loadConfig({ READ_DATABASE_URL: 'postgres://standby1/db' })).toThrow(/^Invalid setting READ_DATABASE_URL: needs DATABASE_URL/);
  });

  test('S3_ENDPOINT without S3_BUCKET names the missing bucket', () => {
    expect(() => loadConfig({ S3_ENDPOINT: 'http://127.0.0.1:9000' })).toThrow(/Invalid setting S3_BUCKET/);
  });
});
