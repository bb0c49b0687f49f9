import { createHash } from 'node:crypto';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { LogPosition } from '../eventStore/eventStore.js';
import { sql } from '../platform/sql.js';
import { definitionVersion } from './definitions.js';
import { subjectSchema, type Subject } from './subjects.js';

/**
 * JSON with object keys sorted at every level: two values are the same figure exactly when their
 * canonical JSON is equal.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
    return Object.fromEntries(Object.entries(item as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}

export type EvidenceRecord = {
  readonly evidenceId: string;
  readonly tenantId: string;
  readonly subject: Subject;
  readonly definitionVersion: number;
  readonly asOf: string;
  readonly checkpoint: LogPosition;
  /** The figure as served. */
  readonly recorded: unknown;
};

const prefix = 'ev1';

/**
 * The id names the tenant (readable, so that a lookup is by tenant like every query), and a
 * SHA-256 over the tenant, subject, definition version, asOf and checkpoint: the same request at
 * the same checkpoint and asOf gives the same id, anything else another one.
 */
export function evidenceIdOf(tenantId: string, subject: Subject, asOf: string, checkpoint: LogPosition): string {
  const digest = createHash('sha256')
    .update(
      canonicalJson({
        tenantId,
        subject,
        definitionVersion,
        asOf,
        checkpoint: { tx: checkpoint.tx.toString(), seq: checkpoint.seq.toString() },
      }),
    )
    .digest('base64url')
    .slice(0, 32);
  return `${prefix}.${Buffer.from(tenantId, 'utf8').toString('base64url')}.${digest}`;
}

/** The tenant an evidence id names, or undefined when the text is not an evidence id. */
export function tenantOfEvidenceId(evidenceId: string): string | undefined {
  const match = /^ev1\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{32})$/.exec(evidenceId);
  if (!match?.[1]) return undefined;
  const tenantId = Buffer.from(match[1], 'base64url').toString('utf8');
  return Buffer.from(tenantId, 'utf8').toString('base64url') === match[1] ? tenantId : undefined;
}

export function evidenceRecord(tenantId: string, subject: Subject, asOf: string, checkpoint: LogPosition, recorded: unknown): EvidenceRecord {
  return { evidenceId: evidenceIdOf(tenantId, subject, asOf, checkpoint), tenantId, subject, definitionVersion, asOf, checkpoint, recorded };
}

/** Stores evidence records; one already stored (same id) is kept as it is. */
export async function storeEvidence(db: CommonQueryMethods, records: readonly EvidenceRecord[]): Promise<void> {
  if (records.length === 0) return;
  const unique = [...new Map(records.map((r) => [`${r.tenantId}\u0000${r.evidenceId}`, r])).values()];
  // One parameter per value rather than sql.unnest: pg writes array parameters element by element
  // with escaping, which for a long exceptions list cost more than the INSERT itself.
  const rows = unique.map(
    (r) => sql.fragment`(
      ${r.tenantId}, ${r.evidenceId}, ${canonicalJson(r.subject)}::jsonb, ${r.definitionVersion}, ${r.asOf}::timestamptz,
      ${r.checkpoint.tx.toString()}::int8, ${r.checkpoint.seq.toString()}::int8, ${JSON.stringify(r.recorded)}
    )`,
  );
  await db.query(sql.typeAlias('void')`
    INSERT INTO analytics_evidence (tenant_id, evidence_id, subject, definition_version, as_of, checkpoint_tx, checkpoint_seq, recorded)
    VALUES ${sql.join(rows, sql.fragment`, `)}
    ON CONFLICT (tenant_id, evidence_id) DO NOTHING
  `);
}

const storedEvidenceRow = z.object({
  tenantId: z.string(),
  evidenceId: z.string(),
  subject: z.unknown(),
  definitionVersion: z.number().int(),
  asOf: z.string(),
  checkpointTx: z.string(),
  checkpointSeq: z.string(),
  recorded: z.string(),
});

export async function loadEvidence(db: CommonQueryMethods, evidenceId: string): Promise<EvidenceRecord | undefined> {
  const tenantId = tenantOfEvidenceId(evidenceId);
  if (tenantId === undefined) return undefined;
  const row = await db.maybeOne(sql.type(storedEvidenceRow)`
    SELECT tenant_id AS "tenantId", evidence_id AS "evidenceId", subject, definition_version AS "definitionVersion",
      to_char(as_of AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "asOf",
      checkpoint_tx::text AS "checkpointTx", checkpoint_seq::text AS "checkpointSeq", recorded
    FROM analytics_evidence
    WHERE tenant_id = ${tenantId} AND evidence_id = ${evidenceId}
  `);
  if (!row) return undefined;
  return {
    evidenceId: row.evidenceId,
    tenantId: row.tenantId,
    subject: subjectSchema.parse(row.subject),
    definitionVersion: row.definitionVersion,
    asOf: row.asOf,
    checkpoint: { tx: BigInt(row.checkpointTx), seq: BigInt(row.checkpointSeq) },
    recorded: JSON.parse(row.recorded) as unknown,
  };
}

/** Deletes at most `limit` evidence records of a tenant stored before `cutoff`; returns how many went. */
export async function deleteEvidenceStoredBefore(db: CommonQueryMethods, tenantId: string, cutoff: string, limit: number): Promise<number> {
  const deleted = await db.any(sql.type(z.object({ evidenceId: z.string() }))`
    DELETE FROM analytics_evidence
    WHERE tenant_id = ${tenantId} AND evidence_id IN (
      SELECT evidence_id FROM analytics_evidence WHERE tenant_id = ${tenantId} AND created_at < ${cutoff} LIMIT ${limit}
    )
    RETURNING evidence_id AS "evidenceId"
  `);
  return deleted.length;
}
