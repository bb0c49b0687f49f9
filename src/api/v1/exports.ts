import { randomUUID } from 'node:crypto';
import { briefingPeriods } from '../../analytics/definitions.js';
import {
  exportErrors,
  exportStatuses,
  findExportJob,
  insertExportJob,
  withdrawUnqueuedJob,
  type ExportJob,
  type NewExportJob,
} from '../../exports/exportJobs.js';
import { exportFileOf } from '../../exports/exportProcessor.js';
import { isoUtc } from '../../platform/clock.js';
import { z } from '../../platform/zodOpenApi.js';
import { responseTimestamp } from '../../events/responseFields.js';
import { ApiError } from '../../platform/errors.js';
import { defineOperation, type OperationContext } from './operation.js';

const tag = 'Exports';
const scope = 'analytics:read';

/** Export ids are lowercase UUIDs; anything else names no job and is never looked up. */
const exportIdPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const exportIdDescription = 'The only handle to the job (a UUID). Every POST creates a new, independent job.';
const exportId = z.string().uuid().max(36).openapi({ description: exportIdDescription });
/** Any text is accepted in the path: one that is not an export id names no job (404, not 400). */
const exportIdParameter = z.string().openapi({ format: 'uuid', maxLength: 36, description: exportIdDescription });
const period = z.enum(briefingPeriods).openapi({ description: '`daily` or `weekly`, as requested.' });

const acceptedResponse = z
  .object({
    exportId,
    status: z.literal('pending'),
    reportType: z.literal('briefing'),
    period,
    requestedAt: responseTimestamp.openapi({ description: 'When the request was accepted; the job is deleted 7 days later.' }),
  })
  .strict()
  .openapi('ExportAccepted');

const exportJobResponse = z
  .object({
    exportId,
    status: z.enum(exportStatuses).openapi({
      description: '`pending` → `building` → `ready`; a build error gives `failed` with `error`, then an automatic retry may return it to `building` and end `ready`. New values may be added.',
    }),
    reportType: z.literal('briefing'),
    period,
    requestedAt: responseTimestamp.openapi({ description: 'When the request was accepted; the job answers 404 from 7 days later.' }),
    asOf: responseTimestamp.optional().openapi({ description: 'Present once ready: the time the briefing in the file was computed at (its figures equal the briefing of that period at that time).' }),
    byteSize: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().openapi({ format: 'int64', description: 'Present once ready: the file size in bytes.' }),
    checksum: z
      .string()
      .length(64)
      .regex(/^[0-9a-f]{64}$/)
      .optional()
      .openapi({ description: 'Present once ready: SHA-256 of the file, 64 lowercase hexadecimal characters. Compare it, and `byteSize`, with what you downloaded.' }),
    downloadUrl: z
      .string()
      .url()
      .max(4000)
      .optional()
      .openapi({
        description:
          'Present only when ready: a signed link to the CSV, used with a plain GET and no API key or other header. A new link on every poll. It is a capability: whoever holds it can download the file until `downloadExpiresAt`, whatever happens meanwhile (a presigned S3 link cannot be revoked, and this service\'s own links behave alike); a suspended workspace, or a revoked key, gets no new link, since the poll itself answers 401 from then on. Keep it as you would keep the file.',
      }),
    downloadExpiresAt: responseTimestamp.optional().openapi({ description: 'Present with `downloadUrl`: when that link stops working (5 minutes after this poll). Poll again for a fresh link.' }),
    error: z.enum(exportErrors).optional().openapi({
      description: 'Machine-readable reason, present when failed. A job that failed once and was built again keeps it while building and after ready: check `status` first. New values may be added.',
    }),
  })
  .strict()
  .openapi('ExportJob');

const requestBody = z
  .object({ period: z.enum(briefingPeriods).optional().openapi({ description: '`daily` (default) or `weekly`.' }) })
  .strict()
  .openapi('ExportRequest', { description: 'Optional. The only field is `period`; any other field is a 400.' });

export const createExportOperation = defineOperation({
  operationId: 'createExport',
  method: 'post',
  path: '/v1/analytics/exports',
  tag,
  readsOwnWrites: true,
  summary: 'Request a CSV export of the management briefing',
  description:
    'Creates an export job and answers 202 at once; `Location` is the job\'s poll URL. The file is built by a worker from the briefing of the period as it stands at build time, with labels in the language of this request\'s `Accept-Language` (en, es, pt). The body is optional and read as JSON whatever its Content-Type: `{"period": "daily" | "weekly"}` (default daily). Not valid JSON, another field or another period: 400. When the job cannot be queued the answer is 500 `common.internal_error` and no job exists. No idempotency key exists: every POST creates an independent job. Poll `GET /v1/analytics/exports/{exportId}` (about every 3 seconds; polls use the request budget).',
  scope,
  body: requestBody,
  response: acceptedResponse,
  responseName: 'ExportAccepted',
  problems: ['common.invalid_request'],
  location: (result) => `/v1/analytics/exports/${(result as { exportId: string }).exportId}`,
  handle: async (context, { body }) => {
    const job: NewExportJob = {
      tenantId: context.principal.tenantId,
      exportId: randomUUID(),
      period: body.period ?? 'daily',
      language: context.language,
      requestedBy: context.principal.prefix,
      requestId: context.requestId,
    };
    const requestedAt = context.clock.now();
    // The row is committed before the task is queued, so a worker never looks for a job that is not there yet.
    try {
      await insertExportJob(context.db, job, requestedAt);
    } catch (error) {
      // No job exists (the database could not store it: down, failing over): the contract's answer, at once.
      context.exports.logger.error({ err: error, reason: 'schedule_failed', exportId: job.exportId, requestId: context.requestId }, 'export job could not be stored');
      throw new ApiError('common.internal_error');
    }
    try {
      await context.exports.queue.enqueue({ tenantId: job.tenantId, exportId: job.exportId });
    } catch (error) {
      context.exports.logger.error(
        { err: error, reason: 'schedule_failed', exportId: job.exportId, requestId: context.requestId, queue: context.exports.queue.kind },
        'export job could not be queued',
      );
      await withdrawUnqueuedJob(context.db, job, context.clock.now());
      throw new ApiError('common.internal_error');
    }
    return { exportId: job.exportId, status: 'pending', reportType: 'briefing', period: job.period, requestedAt: isoUtc(requestedAt) };
  },
});

export const getExportOperation = defineOperation({
  operationId: 'getExport',
  method: 'get',
  path: '/v1/analytics/exports/{exportId}',
  tag,
  readsOwnWrites: true,
  summary: 'Poll an export job',
  description:
    'The job\'s state. Once `ready`: `byteSize`, `checksum`, and a fresh `downloadUrl` valid until `downloadExpiresAt` (5 minutes). Download with a plain GET (no key, no header), then compare the SHA-256 of the bytes with `checksum` and their length with `byteSize`; if they differ, download again. A link works for its 5 minutes even if the workspace is suspended (or the key revoked) after the poll that returned it: it carries no key, and the contract promises it for 5 minutes after that poll; the suspension stops every keyed request at once, this poll included (401). An unknown id, another workspace\'s job, and a job requested more than 7 days ago all answer 404 `common.not_found`.',
  scope,
  params: z.object({ exportId: exportIdParameter }),
  response: exportJobResponse,
  responseName: 'ExportJob',
  problems: ['common.not_found'],
  handle: async (context, { params }) => {
    const now = context.clock.now();
    const job = exportIdPattern.test(params.exportId) ? await findExportJob(context.db, context.principal.tenantId, params.exportId, now) : undefined;
    if (job === undefined) throw new ApiError('common.not_found');
    return { ...jobFields(job), ...(await downloadFields(context, job, now)) };
  },
});

function jobFields(job: ExportJob) {
  return {
    exportId: job.exportId,
    status: job.status,
    reportType: 'briefing' as const,
    period: job.period,
    requestedAt: job.requestedAt,
    ...(job.error === null ? {} : { error: job.error }),
  };
}

async function downloadFields(context: OperationContext, job: ExportJob, now: Date) {
  if (job.status !== 'ready' || job.byteSize === null || job.checksum === null || job.asOf === null) return {};
  const link = await context.exports.store.link(exportFileOf(job), now);
  return { asOf: job.asOf, byteSize: job.byteSize, checksum: job.checksum, downloadUrl: link.url, downloadExpiresAt: isoUtc(link.expiresAt) };
}

export const exportOperations = [createExportOperation, getExportOperation];
