import path from 'node:path';
import type { Router } from 'express';
import { Histogram, type Registry } from 'prom-client';
import type { DatabasePool } from 'slonik';
import type { Config } from '../config/config.js';
import type { BlobStore } from '../exports/blobStore.js';
import { downloadRoute } from '../exports/downloadRoute.js';
import { runExportMaintenance, scheduleExportMaintenance, type ExportMaintenanceDependencies } from '../exports/exportMaintenance.js';
import { createExportProcessor } from '../exports/exportProcessor.js';
import type { ExportProcessor, ExportQueue } from '../exports/exportQueue.js';
import type { ExportService } from '../exports/exportService.js';
import { createInProcessExportQueue } from '../exports/inProcessExportQueue.js';
import { createLocalBlobStore } from '../exports/localBlobStore.js';
import type { Clock } from '../platform/clock.js';
import type { Logger } from '../platform/logger.js';
import { loadSigningSecret } from '../platform/signingSecret.js';

export type ExportsRuntime = {
  /** For the api role: the queue to hand jobs to and the store that links to files. */
  readonly service?: ExportService;
  /** For the api role with local files: the signed-link download route (mounted at /downloads). */
  readonly downloads?: Router;
  readonly queueKind?: ExportQueue['kind'];
  readonly storeKind: BlobStore['kind'];
  /** One maintenance pass now (retention and recovery), as the schedule runs it. */
  runMaintenance?(): ReturnType<typeof runExportMaintenance>;
  close(): Promise<void>;
};

export type ExportsOptions = {
  readonly api: boolean;
  readonly worker: boolean;
  /** Origin of local download links when PUBLIC_BASE_URL is not set (a function: known once listening). */
  readonly serverUrl: string | (() => string);
  readonly clock: Clock;
  readonly registry?: Registry;
  /** Schedules the maintenance every minute (off in tests, which run passes themselves). */
  readonly schedule?: boolean;
  /** Wraps the file store (tests use it to make a build fail inside the processor). */
  readonly wrapStore?: (store: BlobStore) => BlobStore;
  /** Wraps the build of one export (tests use it to hold a build, e.g. a retry, until they let it run). */
  readonly wrapProcessor?: (processor: ExportProcessor) => ExportProcessor;
};

/**
 * The export parts of one process. Files: S3 when S3_BUCKET is set, else DATA_DIR/exports. Queue:
 * with REDIS_URL, api processes produce to BullMQ and worker processes consume it; without it the
 * api process builds its own jobs in process. Whoever builds also runs the maintenance schedule
 * (retention of jobs, files and evidence; requeueing of jobs whose queue entry was lost).
 */
export async function composeExports(config: Config, logger: Logger, pool: DatabasePool, options: ExportsOptions): Promise<ExportsRuntime> {
  const log = logger.child({ component: 'exports' });
  const store = await openStore(config, pool, options.serverUrl);
  const closers: (() => Promise<void>)[] = [() => store.close()];
  const close = async () => {
    for (const closer of [...closers].reverse()) await closer();
  };
  try {
    const observe = buildObserver(options.registry);
    const buildStore = options.wrapStore?.(store) ?? store;
    const built = createExportProcessor({ pool, store: buildStore, clock: options.clock, caps: config.analyticsCaps, logger: log, ...(observe ? { observe } : {}) });
    const processor = options.wrapProcessor?.(built) ?? built;
    let queue: ExportQueue | undefined;
    if (config.redisUrl !== undefined && (options.api || options.worker)) {
      // BullMQ and the AWS SDK are loaded only when configured: together they hold megabytes of
      // code and source text that a process without Redis or S3 would carry for nothing.
      const { createBullmqExportQueue, startBullmqExportWorker } = await import('../exports/bullmqExportQueue.js');
      const producer = createBullmqExportQueue({ redisUrl: config.redisUrl, queueName: config.exportQueueName, logger: log });
      closers.push(() => producer.close());
      queue = producer;
      if (options.worker) {
        const worker = startBullmqExportWorker({
          redisUrl: config.redisUrl,
          queueName: config.exportQueueName,
          processor,
          concurrency: config.exportConcurrency,
          logger: log,
        });
        closers.push(() => worker.close());
      }
    } else if (options.api) {
      const inProcess = createInProcessExportQueue({ processor, logger: log, concurrency: config.exportConcurrency });
      closers.push(() => inProcess.close());
      queue = inProcess;
    } else if (options.worker) {
      log.warn('worker role without REDIS_URL: exports are built by the api process itself; this process only runs their retention');
    }
    const builds = queue !== undefined && (queue.kind === 'in-process' || options.worker);
    const maintenance: ExportMaintenanceDependencies = {
      pool,
      store,
      clock: options.clock,
      logger: log,
      evidenceRetentionMs: config.evidenceRetentionDays * 24 * 60 * 60 * 1000,
      ...(builds && queue !== undefined ? { queue } : {}),
    };
    const runsMaintenance = builds || options.worker;
    if (runsMaintenance && (options.schedule ?? true)) {
      const scheduled = scheduleExportMaintenance(maintenance);
      closers.push(() => scheduled.stop());
    }
    log.info({ store: store.kind, queue: queue?.kind ?? 'none', builds, maintenance: runsMaintenance }, 'exports');
    return {
      ...(options.api && queue !== undefined ? { service: { queue, store, logger: log } } : {}),
      ...(options.api && store.kind === 'local' ? { downloads: downloadRoute({ store, clock: options.clock }) } : {}),
      ...(queue === undefined ? {} : { queueKind: queue.kind }),
      storeKind: store.kind,
      ...(runsMaintenance ? { runMaintenance: () => runExportMaintenance(maintenance) } : {}),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

async function openStore(config: Config, pool: DatabasePool, serverUrl: string | (() => string)) {
  if (config.s3 !== undefined) {
    const { createS3BlobStore } = await import('../exports/s3BlobStore.js');
    const store = createS3BlobStore({ bucket: config.s3.bucket, endpoint: config.s3.endpoint, region: config.s3.region, forcePathStyle: config.s3.forcePathStyle });
    try {
      await store.checkBucket();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }
  const secret = await loadSigningSecret(pool, config.signingSecret);
  return createLocalBlobStore({ directory: path.join(config.dataDir, 'exports'), baseUrl: config.publicBaseUrl ?? serverUrl, secret });
}

function buildObserver(registry: Registry | undefined) {
  if (registry === undefined) return undefined;
  const histogram = new Histogram({
    name: 'supply_export_build_seconds',
    help: 'Time to build and store one briefing export, by outcome.',
    labelNames: ['outcome'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers: [registry],
  });
  return (outcome: 'ready' | 'failed', seconds: number) => histogram.observe({ outcome }, seconds);
}
