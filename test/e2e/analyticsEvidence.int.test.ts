import { beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { verifyEvidence, verifyEvidenceMany, type EvidenceVerification } from '../../src/reporting/verifyEvidence.js';
import { fixedClock } from '../../src/platform/clock.js';
import { sql } from '../../src/platform/sql.js';
import { testAsOf } from '../support/apiTestBed.js';
import { apiClient, useApiBed } from '../support/useApiBed.js';
import { runCli } from '../support/cli.js';

type Json = Record<string, unknown>;

/**
 * Differential test: figures served from the projection's aggregates against the independent
 * fold over the event log, on the medium seed (100 000 events), through the API.
 */
const clock = fixedClock(new Date(Date.parse(testAsOf) + 7.25 * 3_600_000));
const given = useApiBed({ bed: { tenants: 2, scale: 'medium', days: 120, clock }, bootTimeoutMs: 600_000 });
let key: string;
beforeAll(async () => {
  key = await given.bed.issueKey(given.otherTenant, ['analytics:read']);
});
const get = (path: string) => apiClient({ bed: given.bed, key }).get(path);

function evidenceIdsOf(body: unknown): string[] {
  const ids: string[] = [];
  JSON.stringify(body, (name, value: unknown) => {
    if (name === 'evidenceId' && typeof value === 'string') ids.push(value);
    return value;
  });
  return ids;
}

async function verify(evidenceId: string): Promise<EvidenceVerification> {
  return verifyEvidence(given.bed.database.pool, given.bed.eventStore, evidenceId);
}

describe('analytics evidence on the medium seed', () => {
  test('every figure of both briefings, the exceptions, comparison, trend, backlog and cycle time verifies against the fold', async () => {
    const answers = [
      await get('/v1/analytics/briefing?period=daily'),
      await get('/v1/analytics/briefing?period=weekly'),
      await get('/v1/analytics/exceptions'),
      await get('/v1/analytics/clinics/comparison'),
      await get('/v1/analytics/consumption-trend?from=2026-08-01&to=2026-11-02&granularity=week'),
      await get('/v1/analytics/approval-backlog'),
      await get('/v1/analytics/metrics/ORDER_CYCLE_TIME?from=2026-07-01&to=2026-11-02'),
      await get('/v1/analytics/metrics/CONSUMPTION_TREND?from=2026-10-01&to=2026-11-02'),
    ];
    const ids = [...new Set(answers.flatMap(evidenceIdsOf))];
    expect(ids.length).toBeGreaterThanOrEqual(14);
    const weekly = answers[1] as { figures: Json[] };
    // The seed is rich enough that the figures are not trivially zero.
    expect(weekly.figures.filter((f) => typeof f.value === 'number' && f.value > 0).length).toBeGreaterThan(10);
    // One fold of the log for every figure read at the same checkpoint (verifyEvidence folds for each).
    let folds = 0;
    let last = Number.POSITIVE_INFINITY;
    const verifications = await verifyEvidenceMany(given.bed.database.pool, given.bed.eventStore, ids, {
      onProgress: (read) => {
        // Each fold counts the events it read from the start of the log again.
        if (read <= last) folds += 1;
        last = read;
      },
    });
    expect(verifications.map((v) => v.evidenceId)).toEqual(ids);
    expect(folds).toBe(new Set(verifications.map((v) => JSON.stringify([v.workspaceId, v.checkpoint]))).size);
    const mismatches = verifications.filter((verification) => !verification.match);
    expect(mismatches.map((m) => ({ id: m.evidenceId, subject: m.subject, recorded: m.recorded, recomputed: m.recomputed }))).toEqual([]);
  }, 600_000);

  test('a figure altered after it was served is a mismatch: verify prints both and exits 1', async () => {
    const body = await get('/v1/analytics/metrics/PENDING_ORDERS');
    const evidenceId = String(body.evidenceId);
    const ok = await runCli(['evidence', 'verify', evidenceId], { DATABASE_URL: given.bed.database.url });
    expect(ok.code, ok.stderr).toBe(0);
    const printed = JSON.parse(ok.stdout) as Json;
    expect(printed).toMatchObject({ evidenceId, match: true, recorded: { metric: 'PENDING_ORDERS', value: body.value } });
    expect(printed.recomputed).toEqual(printed.recorded);

    await given.bed.database.pool.query(sql.typeAlias('void')`
      UPDATE analytics_evidence SET recorded = jsonb_set(recorded::jsonb, '{value}', to_jsonb((recorded::jsonb->>'value')::int + 1))::text
      WHERE evidence_id = ${evidenceId}
    `);
    const bad = await runCli(['evidence', 'verify', evidenceId], { DATABASE_URL: given.bed.database.url });
    expect(bad.code).toBe(1);
    const mismatch = JSON.parse(bad.stdout) as Json;
    expect(mismatch.match).toBe(false);
    expect((mismatch.recorded as Json).value).toBe(Number(body.value) + 1);
    expect((mismatch.recomputed as Json).value).toBe(body.value);
    expect(bad.stderr).toContain('does not match');
  }, 120_000);

  test('an unknown evidence id names the argument and exits 2', async () => {
    const result = await runCli(['evidence', 'verify', 'ev1.bm8.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'], { DATABASE_URL: given.bed.database.url });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('EVIDENCE_ID');
    const missing = await runCli(['evidence', 'verify'], { DATABASE_URL: given.bed.database.url });
    expect(missing.code).toBe(2);
  });

  test('the evidence record keeps the checkpoint the figure was read at', async () => {
    const body = await get('/v1/analytics/metrics/LOW_STOCK');
    const row = await given.bed.database.pool.one(sql.type(z.object({ tx: z.string(), seq: z.string() }))`
      SELECT checkpoint_tx::text AS tx, checkpoint_seq::text AS seq FROM analytics_evidence WHERE evidence_id = ${String(body.evidenceId)}
    `);
    const verification = await verify(String(body.evidenceId));
    expect(verification.checkpoint).toEqual(row);
    expect(BigInt(row.seq)).toBeGreaterThan(0n);
  });
});
