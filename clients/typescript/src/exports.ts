import type { LooseApi } from './client.js';
import { problemErrorOf } from './problemError.js';
import type { components } from './schema.js';
import { delay } from './transport.js';

type ExportJob = components['schemas']['ExportJob'];

export type ExportBuildOptions = {
  readonly period?: 'daily' | 'weekly';
  /** Language of the CSV labels: `en`, `es` or `pt` (default English). */
  readonly language?: string;
  /** First wait between polls (default 1 000 ms); each wait is 1.5 times the last, up to `maxPollIntervalMs`. */
  readonly pollIntervalMs?: number;
  /** Longest wait between polls (default 5 000 ms). */
  readonly maxPollIntervalMs?: number;
  /** Gives up (ExportError `timeout`) after this long (default 300 000 ms). */
  readonly timeoutMs?: number;
  /**
   * The service rebuilds a job that failed (`processing_error`) on its own, so `failed` is taken as
   * final only once the job has stayed failed this long (default 5 000 ms; 0 gives up at once).
   */
  readonly failedGraceMs?: number;
  /** Downloads whose size or SHA-256 differ from the job's before giving up (default 3). */
  readonly maxDownloads?: number;
  readonly signal?: AbortSignal;
};

/** A built export: the checked file and what the job said of it. */
export type ExportResult = {
  /** The CSV file, its length and SHA-256 checked against `byteSize` and `checksum`. */
  readonly bytes: Uint8Array;
  readonly exportId: string;
  /** SHA-256 of the file, 64 lowercase hexadecimal characters. */
  readonly checksum: string;
  readonly byteSize: number;
  /** When the briefing in the file was computed (ISO 8601, UTC); absent from a service that does not say. */
  readonly asOf: string | undefined;
};

/** An export that did not give a checked file: the job failed, took too long, or its file never matched its checksum. */
export class ExportError extends Error {
  override readonly name = 'ExportError';
  constructor(
    readonly reason: 'failed' | 'timeout' | 'checksum',
    readonly exportId: string,
    /** The job's `error` when it failed (e.g. `processing_error`). */
    readonly jobError?: string,
  ) {
    super(`export ${exportId}: ${reason}${jobError === undefined ? '' : ` (${jobError})`}`);
  }
}

/**
 * The specification's export flow: POST, poll the job with backoff until `ready` or `failed`,
 * download the signed link with a plain request (no key), compare length and SHA-256 with
 * `byteSize` and `checksum`, and on a mismatch or an expired link poll again for a fresh link.
 */
export async function buildExport(api: LooseApi, options: ExportBuildOptions): Promise<ExportResult> {
  const signal = options.signal;
  const headers: Record<string, string> = options.language === undefined ? {} : { 'Accept-Language': options.language };
  const created = await api.POST('/v1/analytics/exports', { body: { period: options.period ?? 'daily' }, headers, ...(signal === undefined ? {} : { signal }) });
  const exportId = (created.data as { exportId?: unknown } | undefined)?.exportId;
  if (typeof exportId !== 'string') throw await problemErrorOf(created.response);
  const deadline = Date.now() + (options.timeoutMs ?? 300_000);
  const maxWait = options.maxPollIntervalMs ?? 5_000;
  const failedGraceMs = options.failedGraceMs ?? 5_000;
  const maxDownloads = options.maxDownloads ?? 3;
  let wait = options.pollIntervalMs ?? 1_000;
  let failedSince: number | undefined;
  let downloads = 0;
  for (;;) {
    const polled = await api.GET('/v1/analytics/exports/{exportId}', { params: { path: { exportId } }, ...(signal === undefined ? {} : { signal }) });
    const job = polled.data as ExportJob | undefined;
    if (job === undefined) throw await problemErrorOf(polled.response);
    if (job.status === 'ready' && job.downloadUrl !== undefined && job.checksum !== undefined && job.byteSize !== undefined) {
      const bytes = await downloadOnce(api, job.downloadUrl, signal);
      if (bytes !== undefined && bytes.byteLength === job.byteSize && (await sha256Hex(bytes)) === job.checksum) {
        return { bytes, exportId, checksum: job.checksum, byteSize: job.byteSize, asOf: job.asOf };
      }
      downloads += 1;
      if (downloads >= maxDownloads) throw new ExportError('checksum', exportId);
      continue;
    }
    if (job.status === 'failed') {
      failedSince ??= Date.now();
      if (Date.now() - failedSince >= failedGraceMs) throw new ExportError('failed', exportId, job.error);
    } else {
      failedSince = undefined;
    }
    if (Date.now() + wait > deadline) throw new ExportError('timeout', exportId);
    await delay(wait, signal);
    wait = Math.min(wait * 1.5, maxWait);
  }
}

/** The file's bytes, or undefined when the link no longer answers (expired: poll again). */
async function downloadOnce(api: LooseApi, url: string, signal: AbortSignal | undefined): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const response = await api.download(url, signal);
  if (!response.ok) {
    await response.body?.cancel();
    return undefined;
  }
  return new Uint8Array(await response.arrayBuffer());
}

export async function sha256Hex(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', bytes);
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
