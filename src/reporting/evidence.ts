import { createHash } from 'node:crypto';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { LogPosition } from '../eventStore/eventStore.js';
import { sql } from '../platform/sql.js';
import { definitionVersion } from '../analytics/definitions.js';
import { subjectForDigest, subjectSchema, type Subject } from '../analytics/subjects.js';

/**
 * JSON with object keys sorted at every level (UTF-16 order, as Array.prototype.sort): two values
 * are the same figure exactly when their canonical JSON is equal. JSON.stringify writes the
 * properties of every object in the order of an array replacer, so the replacer is the sorted set
 * of every key in the value: the native serialiser does the work. (A replacer function that
 * copies each object with its keys sorted cost five times the serialisation on a long exceptions
 * list, and an evidence id digests the whole figure on every read.)
 */
export function canonicalJson(value: unknown): string {
  const keys = new Set<string>();
  collectKeys(value, keys);
  // The replacer's keys are read with [[Get]], inherited ones too: an object without an own
  // `__proto__` would be written with Object.prototype's. Objects without a prototype have none.
  const subject = keys.has('__proto__') ? withoutPrototypes(value) : value;
  return JSON.stringify(subject, [...keys].sort()) ?? 'null';
}

/** The value with every plain object copied to one without a prototype (the same own properties). */
function withoutPrototypes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutPrototypes);
  if (value === null || typeof value !== 'object') return value;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  const copy = Object.create(null) as Record<string, unknown>;
  for (const [key, item] of Object.entries(value)) copy[key] = withoutPrototypes(item);
  return copy;
}

function collectKeys(value: unknown, keys: Set<string>): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) collectKeys(item, keys);
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    keys.add(key);
    collectKeys(item, keys);
  }
}

export type EvidenceRecord = {
  readonly evidenceId: string;
  readonly tenantId: string;
  readonly subject: Subject;
  readonly definitionVersion: number;
  /** When the figure was first served: verification recomputes at this instant. */
  readonly asOf: string;
  readonly checkpoint: LogPosition;
  /** The figure as served. */
  readonly recorded: unknown;
};

/** A record about to be stored, with the canonical JSON of its figure (the digest's and the table's text). */
export type NewEvidence = EvidenceRecord & { readonly recordedJson: string };

/** `ev2`: a content address of the figure. `ev1` ids (request asOf in the digest) still resolve. */
const prefix = 'ev2';
const evidenceIdForm = /^(ev1|ev2)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{32})$/;

/**
 * The id names the tenant (readable, so that a lookup is by tenant like every query) and is a
 * SHA-256 over the tenant, the definition version, the subject (its resolved parameters: windows
 * as whole UTC days, filters, caps), the checkpoint and the figure served. Neither the request's
 * instant nor its language enters it: the same figure at the same checkpoint has one id wherever
 * and whenever it is read, and a different figure another.
 */
export function evidenceIdOf(tenantId: string, subject: Subject, checkpoint: LogPosition, recordedJson: string): string {
  const digest = createHash('sha256')
    .update(
      canonicalJson({
        tenantId,
        definitionVersion,
        subject: subjectForDigest(subject),
        checkpoint: { tx: checkpoint.tx.toString(), seq: checkpoint.seq.toString() },
      }),
    )
    // The figure apart from the parameters, so that its (possibly long) text is not copied again.
    .update('\u0000')
    .update(recordedJson)
    .digest('base64url')
    .slice(0, 32);
  return `${prefix}.${Buffer.from(tenantId, 'utf8').toString('base64url')}.${digest}`;
}

/** The tenant an evidence id names, or undefined when the text is not an evidence id. */
export function tenantOfEvidenceId(evidenceId: string): string | undefined {
  const match = evidenceIdForm.exec(evidenceId);
  if (!match?.[2]) return undefined;
  const tenantId = Buffer.from(match[2], 'base64url').toString('utf8');
  return Buffer.from(tenantId, 'utf8').toString('base64url') === match[2] ? tenantId : undefined;
}

/** The evidence of a figure served at `asOf`, read at `checkpoint`. */
export function evidenceRecord(tenantId: string, subject: Subject, asOf: string, checkpoint: LogPosition, recorded: unknown): NewEvidence {
  const recordedJson = canonicalJson(recorded);
  return {
    evidenceId: evidenceIdOf(tenantId, subject, checkpoint, recordedJson),
    tenantId,
    subject,
    definitionVersion,
    asOf,
    checkpoint,
    recorded,
    recordedJson,
  };
}

/** Records already stored are not written again; once a day a served id's last_served_at moves (retention). */
const refreshServedAfterMs = 24 * 60 * 60 * 1000;

/**
 * Stores the evidence of one answer, all of one tenant served at `servedAt`. A record stored
 * before (same id, so the same figure) is kept as it is, with its first asOf: repeated reads add
 * no rows. The ids already present are found first, so that a long figure (the exceptions list)
 * travels to the database only the first time it is served; that statement also moves the
 * records' last_served_at forward, at most once a day each, which is what retention goes by.
 */
export async function storeEvidence(db: CommonQueryMethods, tenantId: string, servedAt: string, records: readonly NewEvidence[]): Promise<void> {
  if (records.length === 0) return;
  const unique = [...new Map(records.map((r) => [r.evidenceId, r])).values()];
  if (unique.some((r) => r.tenantId !== tenantId)) throw new Error('evidence of one answer belongs to one tenant');
  const ids = unique.map((r) => r.evidenceId);
  const refreshBefore = new Date(Date.parse(servedAt) - refreshServedAfterMs).toISOString();
  const present = await db.anyFirst(sql.type(z.object({ evidenceId: z.string() }))`
    WITH refreshed AS (
      UPDATE analytics_evidence SET last_served_at = ${servedAt}::timestamptz
      WHERE tenant_id = ${tenantId} AND evidence_id = ANY(${sql.array(ids, 'text')}) AND last_served_at < ${refreshBefore}::timestamptz
      RETURNING evidence_id
    )
    SELECT evidence_id AS "evidenceId" FROM analytics_evidence
    WHERE tenant_id = ${tenantId} AND evidence_id = ANY(${sql.array(ids, 'text')})
  `);
  const known = new Set(present);
  const missing = unique.filter((r) => !known.has(r.evidenceId));
  if (missing.length === 0) return;
  // One parameter per value rather than sql.unnest: pg writes array parameters element by element
  // with escaping, which for a long exceptions list cost more than the INSERT itself.
  const rows = missing.map(
    (r) => sql.fragment`(
      ${r.tenantId}, ${r.evidenceId}, ${canonicalJson(r.subject)}::jsonb, ${r.definitionVersion}, ${r.asOf}::timestamptz,
      ${r.checkpoint.tx.toString()}::int8, ${r.checkpoint.seq.toString()}::int8, ${r.recordedJson}, ${servedAt}::timestamptz
    )`,
  );
  await db.query(sql.typeAlias('void')`
    INSERT INTO analytics_evidence (tenant_id, evidence_id, subject, definition_version, as_of, checkpoint_tx, checkpoint_seq, recorded, last_served_at)
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

/** Deletes at most `limit` evidence records of a tenant last served before `cutoff`; returns how many went. */
export async function deleteEvidenceServedBefore(db: CommonQueryMethods, tenantId: string, cutoff: string, limit: number): Promise<number> {
  const deleted = await db.any(sql.type(z.object({ evidenceId: z.string() }))`
    DELETE FROM analytics_evidence
    WHERE tenant_id = ${tenantId} AND evidence_id IN (
      SELECT evidence_id FROM analytics_evidence WHERE tenant_id = ${tenantId} AND last_served_at < ${cutoff} LIMIT ${limit}
    )
    RETURNING evidence_id AS "evidenceId"
  `);
  return deleted.length;
}
