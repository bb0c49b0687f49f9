import type { CommonQueryMethods } from 'slonik';
import type { EventStore } from '../eventStore/eventStore.js';
import { definitionVersion } from '../analytics/definitions.js';
import { canonicalJson, loadEvidence } from './evidence.js';
import { createFoldComputer } from '../analytics/fold/foldComputer.js';
import type { AnalyticsFoldState } from '../analytics/fold/analyticsFold.js';
import { foldTenantLog } from './foldTenantLog.js';
import { computeSubject, type Subject } from '../analytics/subjects.js';

export type EvidenceVerification = {
  readonly evidenceId: string;
  readonly workspaceId: string;
  readonly subject: Subject;
  readonly asOf: string;
  readonly checkpoint: { readonly tx: string; readonly seq: string };
  readonly definitionVersion: number;
  readonly match: boolean;
  readonly recorded: unknown;
  readonly recomputed: unknown;
  /** Why nothing could be recomputed (an older definition version). */
  readonly reason?: string;
};

export class UnknownEvidenceError extends Error {
  constructor(readonly evidenceId: string) {
    super(`no evidence record ${evidenceId}: check the EVIDENCE_ID argument (it is the evidenceId of an analytics answer)`);
    this.name = 'UnknownEvidenceError';
  }
}

/**
 * Recomputes a stored figure from the event log up to the checkpoint it was read at, with the
 * fold (never the projection's tables or SQL), and compares it with the figure as served.
 */
export async function verifyEvidence(
  db: CommonQueryMethods,
  eventStore: EventStore,
  evidenceId: string,
  options: { onProgress?: (eventsRead: number) => void } = {},
): Promise<EvidenceVerification> {
  const [verification] = await verifyEvidenceMany(db, eventStore, [evidenceId], options);
  if (verification === undefined) throw new Error(`no verification of ${evidenceId}`);
  return verification;
}

/**
 * verifyEvidence for several ids, in their order: the log is folded once for each workspace and
 * checkpoint among them (the figures of one answer, a briefing's a dozen, share both), and every
 * figure of that group is computed from the one fold (computing reads the fold, never changes it).
 * An unknown id throws UnknownEvidenceError before anything is folded.
 */
export async function verifyEvidenceMany(
  db: CommonQueryMethods,
  eventStore: EventStore,
  evidenceIds: readonly string[],
  options: { onProgress?: (eventsRead: number) => void } = {},
): Promise<EvidenceVerification[]> {
  const records = [];
  for (const evidenceId of evidenceIds) {
    const record = await loadEvidence(db, evidenceId);
    if (record === undefined) throw new UnknownEvidenceError(evidenceId);
    records.push(record);
  }
  const folds = new Map<string, Promise<AnalyticsFoldState>>();
  const verifications: EvidenceVerification[] = [];
  for (const record of records) {
    const described = {
      evidenceId: record.evidenceId,
      workspaceId: record.tenantId,
      subject: record.subject,
      asOf: record.asOf,
      checkpoint: { tx: record.checkpoint.tx.toString(), seq: record.checkpoint.seq.toString() },
      definitionVersion: record.definitionVersion,
    };
    if (record.definitionVersion !== definitionVersion) {
      verifications.push({
        ...described,
        match: false,
        recorded: record.recorded,
        recomputed: null,
        reason: `recorded with definition version ${record.definitionVersion}; this build computes version ${definitionVersion}`,
      });
      continue;
    }
    const foldKey = JSON.stringify([record.tenantId, described.checkpoint.tx, described.checkpoint.seq]);
    let fold = folds.get(foldKey);
    if (fold === undefined) folds.set(foldKey, (fold = foldTenantLog(eventStore, record.tenantId, record.checkpoint, options)));
    const state = await fold;
    const recomputed = await computeSubject(createFoldComputer(state, record.tenantId), record.subject, record.asOf);
    verifications.push({ ...described, match: canonicalJson(recomputed) === canonicalJson(record.recorded), recorded: record.recorded, recomputed });
  }
  return verifications;
}
