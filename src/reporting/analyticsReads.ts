import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { createAnalyticsReader } from '../../projections/analytics/queries.js';
import type { LogPosition } from '../eventStore/eventStore.js';
import { sql } from '../platform/sql.js';
import { canonicalJson, evidenceRecord, storeEvidence } from './evidence.js';
import type { AnalyticsComputer, MetricResult } from '../analytics/results.js';
import { computeSubject, type Subject } from '../analytics/subjects.js';

/** The projection whose checkpoint every analytics figure is read at. */
export const analyticsProjectionName = 'analytics';

export type ComputedSubject = { readonly subject: Subject; readonly result: unknown; readonly evidenceId: string };

/**
 * Computes subjects from the analytics aggregates in one snapshot (REPEATABLE READ, read only), so
 * that every figure and the checkpoint they are read at belong together, then stores their
 * evidence (once per figure: see storeEvidence) on `storeTo`: the primary, when `db` is a hot
 * standby (the standby's snapshot gives the checkpoint; the record is verifiable from the moment
 * the answer is sent). Results come back in the order of `subjects`.
 */
export async function computeWithEvidence(
  db: CommonQueryMethods,
  tenantId: string,
  asOf: string,
  subjects: readonly Subject[],
  storeTo: CommonQueryMethods = db,
): Promise<{ readonly checkpoint: LogPosition; readonly computed: readonly ComputedSubject[] }> {
  const { checkpoint, results } = await db.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`);
    const position = await tx.one(sql.type(checkpointRow)`
      SELECT checkpoint_tx::text AS tx, checkpoint_seq::text AS seq FROM projection_generations
      WHERE projection = ${analyticsProjectionName} AND state = 'active'
    `);
    const reader = memoizedMetrics(createAnalyticsReader(tx, tenantId));
    const computed: unknown[] = [];
    for (const subject of subjects) computed.push(await computeSubject(reader, subject, asOf));
    return { checkpoint: { tx: BigInt(position.tx), seq: BigInt(position.seq) }, results: computed };
  });
  const records = subjects.map((subject, index) => evidenceRecord(tenantId, subject, asOf, checkpoint, results[index]));
  await storeEvidence(storeTo, tenantId, asOf, records);
  return { checkpoint, computed: records.map((record) => ({ subject: record.subject, result: record.recorded, evidenceId: record.evidenceId })) };
}

/** The result and evidence of the subject at `index` of a `computeWithEvidence` call. */
export function resultAt<T>(computed: readonly ComputedSubject[], index: number): { result: T; evidenceId: string } {
  const item = computed[index];
  if (item === undefined) throw new Error(`analytics subject ${index} was not computed`);
  return { result: item.result as T, evidenceId: item.evidenceId };
}

/**
 * A briefing and the evidence of its own metrics ask for the same metric figures (the same
 * parameters) in one snapshot: each is computed once.
 */
function memoizedMetrics(computer: AnalyticsComputer): AnalyticsComputer {
  const metrics = new Map<string, Promise<MetricResult>>();
  return {
    ...computer,
    metric: (key, params, asOf) => {
      const memoKey = canonicalJson({ key, params, asOf });
      let result = metrics.get(memoKey);
      if (result === undefined) {
        result = computer.metric(key, params, asOf);
        metrics.set(memoKey, result);
      }
      return result;
    },
  };
}

const checkpointRow = z.object({ tx: z.string(), seq: z.string() });
