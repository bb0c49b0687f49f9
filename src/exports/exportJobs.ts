import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { briefingPeriods } from '../analytics/definitions.js';
import { sql } from '../platform/sql.js';

/** Jobs answer 404 and are deleted this long after the request (the specification's retention). */
export const exportRetentionMs = 7 * 24 * 60 * 60 * 1000;

export const exportStatuses = ['pending', 'building', 'ready', 'failed'] as const;
export const exportErrors = ['processing_error'] as const;
export type ExportLanguage = 'en' | 'es' | 'pt';

const jobRow = z.object({
  tenantId: z.string(),
  exportId: z.string(),
  period: z.enum(briefingPeriods),
  language: z.enum(['en', 'es', 'pt']),
  status: z.enum(exportStatuses),
  requestedAt: z.string(),
  attempts: z.number().int(),
  error: z.enum(exportErrors).nullable(),
  asOf: z.string().nullable(),
  byteSize: z.number().int().nullable(),
  checksum: z.string().nullable(),
  storageKey: z.string().nullable(),
  fileName: z.string().nullable(),
});
export type ExportJob = z.infer<typeof jobRow>;

const jobColumns = sql.fragment`
  tenant_id AS "tenantId", export_id AS "exportId", period, language, status, requested_at AS "requestedAt",
  attempts, error, as_of AS "asOf", byte_size::float8 AS "byteSize", checksum, storage_key AS "storageKey", file_name AS "fileName"
`;

export type AuditEntry = {
  readonly tenantId: string;
  readonly actor: string;
  readonly action: 'export.requested' | 'export.schedule_failed' | 'export.failed' | 'export.ready' | 'export.deleted';
  readonly exportId?: string;
  readonly requestId?: string;
  readonly details: Readonly<Record<string, string | number | boolean>>;
};

async function recordAudit(db: CommonQueryMethods, at: Date, entry: AuditEntry): Promise<void> {
  await db.query(sql.typeAlias('void')`
    INSERT INTO audit_trail (tenant_id, recorded_at, actor, action, export_id, request_id, details)
    VALUES (${entry.tenantId}, ${at.toISOString()}, ${entry.actor}, ${entry.action}, ${entry.exportId ?? null},
            ${entry.requestId ?? null}, ${JSON.stringify(entry.details)}::jsonb)
  `);
}

export type NewExportJob = {
  readonly tenantId: string;
  readonly exportId: string;
  readonly period: (typeof briefingPeriods)[number];
  readonly language: ExportLanguage;
  readonly requestedBy: string;
  readonly requestId: string;
};

/** The job (pending) and its audit entry, together. */
export async function insertExportJob(db: CommonQueryMethods, job: NewExportJob, at: Date): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`
      INSERT INTO export_jobs (tenant_id, export_id, report_type, period, language, status, requested_by, requested_at, updated_at)
      VALUES (${job.tenantId}, ${job.exportId}, 'briefing', ${job.period}, ${job.language}, 'pending', ${job.requestedBy},
              ${at.toISOString()}, ${at.toISOString()})
    `);
    await recordAudit(tx, at, {
      tenantId: job.tenantId,
      actor: job.requestedBy,
      action: 'export.requested',
      exportId: job.exportId,
      requestId: job.requestId,
      details: { reportType: 'briefing', period: job.period, language: job.language },
    });
  });
}

/**
 * A job the queue refused never existed: its row goes, and the audit trail keeps the request with
 * the reason `schedule_failed` (the export id is kept there only to tie the entry to the log).
 */
export async function withdrawUnqueuedJob(db: CommonQueryMethods, job: NewExportJob, at: Date): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`DELETE FROM export_jobs WHERE tenant_id = ${job.tenantId} AND export_id = ${job.exportId}`);
    await recordAudit(tx, at, {
      tenantId: job.tenantId,
      actor: job.requestedBy,
      action: 'export.schedule_failed',
      exportId: job.exportId,
      requestId: job.requestId,
      details: { reason: 'schedule_failed', reportType: 'briefing', period: job.period },
    });
  });
}

/** A job of this tenant requested less than 7 days before `now`; older ones no longer exist. */
export async function findExportJob(db: CommonQueryMethods, tenantId: string, exportId: string, now: Date): Promise<ExportJob | undefined> {
  const row = await db.maybeOne(sql.type(jobRow)`
    SELECT ${jobColumns} FROM export_jobs
    WHERE tenant_id = ${tenantId} AND export_id = ${exportId} AND requested_at > ${retentionCutoff(now)}
  `);
  return row ?? undefined;
}

export function retentionCutoff(now: Date): string {
  return new Date(now.getTime() - exportRetentionMs).toISOString();
}

/**
 * pending, failed (a retry) or building (a build cut short by a crash) → building. Undefined when
 * the job is gone, expired or already ready: there is nothing to build.
 */
export async function startBuilding(db: CommonQueryMethods, tenantId: string, exportId: string, now: Date): Promise<ExportJob | undefined> {
  const row = await db.maybeOne(sql.type(jobRow)`
    UPDATE export_jobs SET status = 'building', attempts = attempts + 1, updated_at = ${now.toISOString()}
    WHERE tenant_id = ${tenantId} AND export_id = ${exportId} AND status IN ('pending', 'failed', 'building')
      AND requested_at > ${retentionCutoff(now)}
    RETURNING ${jobColumns}
  `);
  return row ?? undefined;
}

export type BuiltFile = { readonly asOf: string; readonly byteSize: number; readonly checksum: string; readonly storageKey: string; readonly fileName: string };

/** building → ready with the file, and the size and checksum in the audit trail. False when the job is gone. */
export async function markReady(db: CommonQueryMethods, job: ExportJob, file: BuiltFile, attempt: number, now: Date): Promise<boolean> {
  return db.transaction(async (tx) => {
    const updated = await tx.maybeOne(sql.type(z.object({ exportId: z.string() }))`
      UPDATE export_jobs
      SET status = 'ready', as_of = ${file.asOf}, byte_size = ${file.byteSize}, checksum = ${file.checksum},
          storage_key = ${file.storageKey}, file_name = ${file.fileName}, ready_at = ${now.toISOString()}, updated_at = ${now.toISOString()}
      WHERE tenant_id = ${job.tenantId} AND export_id = ${job.exportId} AND status = 'building'
      RETURNING export_id AS "exportId"
    `);
    if (updated === null) return false;
    await recordAudit(tx, now, {
      tenantId: job.tenantId,
      actor: 'worker',
      action: 'export.ready',
      exportId: job.exportId,
      details: { reportType: 'briefing', period: job.period, byteSize: file.byteSize, checksum: file.checksum, asOf: file.asOf, attempt },
    });
    return true;
  });
}

/** building → failed with `processing_error` (kept if the retry succeeds). */
export async function markFailed(db: CommonQueryMethods, job: ExportJob, attempt: { number: number; final: boolean }, now: Date): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`
      UPDATE export_jobs SET status = 'failed', error = 'processing_error', updated_at = ${now.toISOString()}
      WHERE tenant_id = ${job.tenantId} AND export_id = ${job.exportId} AND status = 'building'
    `);
    await recordAudit(tx, now, {
      tenantId: job.tenantId,
      actor: 'worker',
      action: 'export.failed',
      exportId: job.exportId,
      details: { error: 'processing_error', attempt: attempt.number, willRetry: !attempt.final },
    });
  });
}

/**
 * requested_at of the oldest job still pending (accepted, not yet taken by a worker), of any
 * tenant, or undefined when none: an operator's figure (the age of the queue's head).
 */
export async function oldestPendingRequestedAt(db: CommonQueryMethods, now: Date): Promise<string | undefined> {
  const oldest = await db.oneFirst(sql.type(z.object({ oldest: z.string().nullable() }))`
    SELECT min(requested_at) AS oldest FROM export_jobs WHERE status = 'pending' AND requested_at > ${retentionCutoff(now)}
  `);
  return oldest ?? undefined;
}

/** Tenants that may own jobs or evidence: every row of either was made with one of the tenant's keys. */
export async function tenantsWithKeys(db: CommonQueryMethods): Promise<readonly string[]> {
  return db.anyFirst(sql.type(z.object({ tenantId: z.string() }))`SELECT DISTINCT tenant_id AS "tenantId" FROM api_keys ORDER BY 1`);
}

/** Jobs of a tenant past retention, oldest first, at most `limit`. */
export async function expiredJobs(db: CommonQueryMethods, tenantId: string, now: Date, limit: number): Promise<readonly ExportJob[]> {
  return db.any(sql.type(jobRow)`
    SELECT ${jobColumns} FROM export_jobs
    WHERE tenant_id = ${tenantId} AND requested_at <= ${retentionCutoff(now)}
    ORDER BY requested_at LIMIT ${limit}
  `);
}

/** Deletes the jobs, each with an audit entry. */
export async function deleteJobs(db: CommonQueryMethods, tenantId: string, exportIds: readonly string[], now: Date): Promise<void> {
  if (exportIds.length === 0) return;
  await db.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`
      DELETE FROM export_jobs WHERE tenant_id = ${tenantId} AND export_id = ANY(${sql.array(exportIds, 'text')})
    `);
    await tx.query(sql.typeAlias('void')`
      INSERT INTO audit_trail (tenant_id, recorded_at, actor, action, export_id, details)
      SELECT ${tenantId}, ${now.toISOString()}, 'retention', 'export.deleted', id, '{"reason":"retention"}'::jsonb
      FROM unnest(${sql.array(exportIds, 'text')}) AS id
    `);
  });
}

/**
 * Jobs of a tenant that should be building but whose build no queue holds any more: pending or
 * building untouched for `staleMs` (a producer or worker stopped mid-way), or failed with runs left.
 */
export async function unfinishedJobs(db: CommonQueryMethods, tenantId: string, now: Date, staleMs: number, maxAttempts: number): Promise<readonly ExportJob[]> {
  const staleBefore = new Date(now.getTime() - staleMs).toISOString();
  return db.any(sql.type(jobRow)`
    SELECT ${jobColumns} FROM export_jobs
    WHERE tenant_id = ${tenantId} AND requested_at > ${retentionCutoff(now)} AND updated_at <= ${staleBefore}
      AND (status IN ('pending', 'building') OR (status = 'failed' AND attempts < ${maxAttempts}))
    ORDER BY requested_at LIMIT 1000
  `);
}
