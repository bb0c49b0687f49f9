import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { maxAnalyticsCaps, type AnalyticsCaps } from './analyticsCaps.js';
import { parsePostgresUrl, parseReadDatabaseUrls } from './postgresUrl.js';
import { parseRedisUrl } from './redisUrl.js';

/** READ_REPLICA_LEASE_MS's default: reads go on through a failover under Patroni's default timings (ttl 30 s, loop_wait 10 s); see docs/operators.md. */
export const defaultReadReplicaLeaseMs = 50_000;

const emptyAsAbsent = (value: unknown): unknown => (typeof value === 'string' && value.trim() === '' ? undefined : value);

const optionalString = (schema: z.ZodString) => z.preprocess(emptyAsAbsent, schema.optional());

const urlWithProtocols = (protocols: readonly string[], what: string) =>
  z
    .string()
    .url(`must be a URL (${what})`)
    .refine((value) => !URL.canParse(value) || protocols.includes(new URL(value).protocol), {
      message: `must start with ${protocols.map((p) => `${p}//`).join(' or ')} (${what})`,
    });

function validPostgresUrl(value: string, context: z.RefinementCtx): void {
  try {
    parsePostgresUrl(value);
  } catch (error) {
    context.addIssue({ code: z.ZodIssueCode.custom, message: error instanceof Error ? error.message : String(error) });
  }
}

function validRedisUrl(value: string, context: z.RefinementCtx): void {
  try {
    parseRedisUrl(value);
  } catch (error) {
    context.addIssue({ code: z.ZodIssueCode.custom, message: error instanceof Error ? error.message : String(error) });
  }
}

const integerSetting = (min: number, max: number, fallback: number) =>
  z.preprocess(
    emptyAsAbsent,
    z
      .string()
      .regex(/^\d+$/, `must be a whole number from ${min} to ${max}`)
      .transform(Number)
      .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
      .default(String(fallback)),
  );

const booleanSetting = z.preprocess(
  emptyAsAbsent,
  z
    .enum(['true', 'false', '1', '0'], { errorMap: () => ({ message: 'must be true or false' }) })
    .transform((value) => value === 'true' || value === '1')
    .default('false'),
);

/**
 * Express's `trust proxy`: which hops in front of the service may say, in `X-Forwarded-For` and
 * `X-Forwarded-Proto`, who the client is. Off by default: every per-address limit keys on the
 * socket's address.
 */
export type TrustProxy = false | number | readonly string[];

const proxyNames = ['loopback', 'linklocal', 'uniquelocal'];

/** An address, a subnet (address/prefix) or one of Express's names for address ranges. */
function isProxyAddress(entry: string): boolean {
  if (proxyNames.includes(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

const trustProxySetting = z.preprocess(
  emptyAsAbsent,
  z
    .string()
    .transform((value, context): TrustProxy => {
      const text = value.trim();
      if (text === 'false') return false;
      if (/^\d{1,2}$/.test(text)) return Number(text);
      const entries = text.split(',').map((entry) => entry.trim());
      const wrong = entries.find((entry) => !isProxyAddress(entry));
      if (wrong === undefined) return Object.freeze(entries);
      context.addIssue({
        code: z.ZodIssueCode.custom,
        message: `must be false, a number of proxy hops (0 to 99), or a comma-separated list of proxy addresses, subnets (10.0.0.0/8) or loopback, linklocal, uniquelocal; "${wrong}" is none of these`,
      });
      return z.NEVER;
    })
    .default('false'),
);

const environmentSchema = z.object({
  PORT: integerSetting(0, 65535, 8080),
  // One server, or libpq's list of servers (postgres://app@pg1:5432,pg2:5432/db): writes go to whichever is the primary.
  DATABASE_URL: z.preprocess(emptyAsAbsent, z.string().superRefine(validPostgresUrl).optional()),
  READ_DATABASE_URL: z.preprocess(
    emptyAsAbsent,
    z
      .string()
      .transform((value, context): readonly string[] => {
        try {
          return Object.freeze(parseReadDatabaseUrls(value));
        } catch (error) {
          context.addIssue({
            code: z.ZodIssueCode.custom,
            message: `must be one or more comma-separated URLs of hot standbys (postgres://user@standby1:5432/db,postgres://user@standby2:5432/db) or one URL listing them (postgres://user@pg1:5432,pg2:5432,pg3:5432/db): ${error instanceof Error ? error.message : String(error)}`,
          });
          return z.NEVER;
        }
      })
      .optional(),
  ),
  READ_REPLICA_MAX_LAG_MS: integerSetting(100, 600_000, 5000),
  READ_REPLICA_LEASE_MS: integerSetting(1000, 600_000, defaultReadReplicaLeaseMs),
  READ_REPLICA_STEWARD: booleanSetting,
  EVENTSTORE_URL: z.preprocess(
    emptyAsAbsent,
    urlWithProtocols(['esdb:', 'esdb+discover:', 'kurrentdb:', 'kurrentdb+discover:'], 'esdb://host:2113?tls=false').optional(),
  ),
  // One Redis server, or Sentinels and the name of the master they watch (see redisUrl.ts).
  REDIS_URL: z.preprocess(emptyAsAbsent, z.string().superRefine(validRedisUrl).optional()),
  S3_BUCKET: optionalString(z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a valid S3 bucket name')),
  S3_ENDPOINT: z.preprocess(emptyAsAbsent, urlWithProtocols(['http:', 'https:'], 'http://host:port').optional()),
  S3_REGION: z.preprocess(emptyAsAbsent, z.string().regex(/^[a-z0-9-]+$/, 'must be a region name such as us-east-1').default('us-east-1')),
  S3_FORCE_PATH_STYLE: booleanSetting,
  PUBLIC_BASE_URL: z.preprocess(emptyAsAbsent, urlWithProtocols(['http:', 'https:'], 'https://api.example.com').optional()),
  RATE_LIMIT_PER_MINUTE: integerSetting(1, 1_000_000, 120),
  PROJECTOR_BATCH_SIZE: integerSetting(1, 50_000, 2000),
  ERROR_TYPE_BASE: z.preprocess(
    emptyAsAbsent,
    urlWithProtocols(['http:', 'https:', 'urn:'], 'https://errors.example.com/v1')
      .transform((value) => value.replace(/\/+$/, ''))
      .default('https://problems.dental-supply.example/v1'),
  ),
  LOG_LEVEL: z.preprocess(
    emptyAsAbsent,
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      errorMap: () => ({ message: 'must be one of fatal, error, warn, info, debug, trace, silent' }),
    }).default('info'),
  ),
  DATA_DIR: z.preprocess(emptyAsAbsent, z.string().default('./.data')),
  SIGNING_SECRET: optionalString(z.string().min(32, 'must be at least 32 characters')),
  ANALYTICS_EXCEPTIONS_CAP: integerSetting(1, maxAnalyticsCaps.exceptions, 500),
  ANALYTICS_COMPARISON_CAP: integerSetting(1, maxAnalyticsCaps.comparison, 1000),
  ANALYTICS_TREND_CAP: integerSetting(1, maxAnalyticsCaps.trend, 20_000),
  ANALYTICS_COUNT_CAP: integerSetting(1, maxAnalyticsCaps.counts, 100_000),
  ANALYTICS_BACKLOG_CAP: integerSetting(1, maxAnalyticsCaps.backlog, 100_000),
  EVIDENCE_RETENTION_DAYS: integerSetting(1, 3650, 90),
  EXPORT_QUEUE_NAME: z.preprocess(
    emptyAsAbsent,
    z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be 1 to 100 letters, digits, dots, dashes or underscores')
      .default('supply-api-exports'),
  ),
  EXPORT_CONCURRENCY: integerSetting(1, 32, 2),
  TRUST_PROXY: trustProxySetting,
});

/** The names of every setting the environment may hold. */
export const settingNames: readonly string[] = Object.freeze(Object.keys(environmentSchema.shape));

export type Config = Readonly<{
  port: number;
  databaseUrl: string | undefined;
  /** Hot standbys of DATABASE_URL that /v1 and /mcp read from (empty: every read goes to the primary). */
  readDatabaseUrls: readonly string[];
  /** A standby further behind than this (replay lag) serves no reads until it has caught up. */
  readReplicaMaxLagMs: number;
  /** How long a read lease on a standby lasts; below the HA manager's ttl - loop_wait - retry_timeout (docs/operators.md). */
  readReplicaLeaseMs: number;
  /** The API processes keep synchronous_standby_names in step themselves (no HA manager owns it). */
  readReplicaSteward: boolean;
  eventStoreUrl: string | undefined;
  /** `redis://…` or `redis+sentinel://…` (checked by parseRedisUrl). */
  redisUrl: string | undefined;
  s3: Readonly<{ bucket: string; endpoint: string | undefined; region: string; forcePathStyle: boolean }> | undefined;
  publicBaseUrl: string | undefined;
  rateLimitPerMinute: number;
  /** Most events the projector applies in one transaction (catch-up batch size). */
  projectorBatchSize: number;
  errorTypeBase: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  dataDir: string;
  signingSecret: string | undefined;
  /** Scan caps of analytics reads (the truncated flag). */
  analyticsCaps: AnalyticsCaps;
  /** Analytics evidence is deleted this many days after an answer last carried its id. */
  evidenceRetentionDays: number;
  /** The BullMQ queue of export builds (processes sharing it must share the database too). */
  exportQueueName: string;
  /** Builds one worker runs at once. */
  exportConcurrency: number;
  /** Which reverse proxies the client address may come from (Express `trust proxy`). */
  trustProxy: TrustProxy;
}>;

export class ConfigError extends Error {
  constructor(readonly setting: string, reason: string) {
    super(`Invalid setting ${setting}: ${reason}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment once; a bad value throws a ConfigError naming the setting. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>, cwd: string = process.cwd()): Config {
  const parsed = environmentSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const setting = issue?.path[0];
    throw new ConfigError(typeof setting === 'string' ? setting : 'environment', issue?.message ?? 'invalid');
  }
  const e = parsed.data;
  if (e.READ_DATABASE_URL !== undefined && e.DATABASE_URL === undefined) {
    throw new ConfigError('READ_DATABASE_URL', 'needs DATABASE_URL (the primary its standbys replicate); the embedded database has no standbys');
  }
  if ((e.S3_ENDPOINT !== undefined || e.S3_FORCE_PATH_STYLE) && e.S3_BUCKET === undefined) {
    throw new ConfigError('S3_BUCKET', 'must be set when S3_ENDPOINT or S3_FORCE_PATH_STYLE is set');
  }
  return Object.freeze({
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    readDatabaseUrls: e.READ_DATABASE_URL ?? Object.freeze([]),
    readReplicaMaxLagMs: e.READ_REPLICA_MAX_LAG_MS,
    readReplicaLeaseMs: e.READ_REPLICA_LEASE_MS,
    readReplicaSteward: e.READ_REPLICA_STEWARD,
    eventStoreUrl: e.EVENTSTORE_URL,
    redisUrl: e.REDIS_URL,
    s3:
      e.S3_BUCKET === undefined
        ? undefined
        : Object.freeze({ bucket: e.S3_BUCKET, endpoint: e.S3_ENDPOINT, region: e.S3_REGION, forcePathStyle: e.S3_FORCE_PATH_STYLE }),
    publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    projectorBatchSize: e.PROJECTOR_BATCH_SIZE,
    errorTypeBase: e.ERROR_TYPE_BASE,
    logLevel: e.LOG_LEVEL,
    dataDir: path.resolve(cwd, e.DATA_DIR),
    signingSecret: e.SIGNING_SECRET,
    analyticsCaps: Object.freeze({
      exceptions: e.ANALYTICS_EXCEPTIONS_CAP,
      comparison: e.ANALYTICS_COMPARISON_CAP,
      trend: e.ANALYTICS_TREND_CAP,
      counts: e.ANALYTICS_COUNT_CAP,
      backlog: e.ANALYTICS_BACKLOG_CAP,
    }),
    evidenceRetentionDays: e.EVIDENCE_RETENTION_DAYS,
    exportQueueName: e.EXPORT_QUEUE_NAME,
    exportConcurrency: e.EXPORT_CONCURRENCY,
    trustProxy: e.TRUST_PROXY,
  });
}
