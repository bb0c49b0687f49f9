import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { z } from 'zod';
import type { fixedClock } from '../../src/platform/clock.js';
import { sql } from '../../src/platform/sql.js';
import type { ApiTestBed } from '../support/apiTestBed.js';

/** Requests, polls, downloads and checks of the export flow tests (exports.int.test.ts). */

export type Json = Record<string, unknown>;
export type ExportJob = {
  exportId: string;
  status: string;
  reportType: string;
  period: string;
  requestedAt: string;
  asOf?: string;
  byteSize?: number;
  checksum?: string;
  downloadUrl?: string;
  downloadExpiresAt?: string;
  error?: string;
};
export type Figure = { metric: string; dimension?: string; label: string; value: number | null; unit: string; evidenceId: string };

export const minute = 60_000;

export async function postExport(bed: ApiTestBed, key: string, options: { body?: string; language?: string; headers?: Record<string, string> } = {}) {
  return bed.request('/v1/analytics/exports', {
    key,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(options.language ? { 'accept-language': options.language } : {}), ...options.headers },
    ...(options.body === undefined ? {} : { body: options.body }),
  });
}

export async function requestExport(bed: ApiTestBed, key: string, options: { period?: string; language?: string } = {}): Promise<string> {
  const response = await postExport(bed, key, {
    ...(options.period === undefined ? {} : { body: JSON.stringify({ period: options.period }) }),
    ...(options.language === undefined ? {} : { language: options.language }),
  });
  expect(response.status, response.text).toBe(202);
  return (response.body as { exportId: string }).exportId;
}

export async function poll(bed: ApiTestBed, key: string, exportId: string): Promise<ExportJob> {
  const response = await bed.request(`/v1/analytics/exports/${exportId}`, { key });
  expect(response.status, response.text).toBe(200);
  return response.body as ExportJob;
}

/** Polls until ready or failed (with retries left, failed is passed through); returns every status seen. */
export async function pollUntilReady(bed: ApiTestBed, key: string, exportId: string, timeoutMs = 30_000): Promise<{ job: ExportJob; seen: ExportJob[] }> {
  const seen: ExportJob[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await poll(bed, key, exportId);
    seen.push(job);
    if (job.status === 'ready') return { job, seen };
    if (Date.now() > deadline) throw new Error(`export ${exportId} not ready: ${JSON.stringify(seen.slice(-3))}`);
    await sleep(50);
  }
}

/** A plain GET: no key, no header. */
export async function download(url: string): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const response = await fetch(url);
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

export async function briefing(bed: ApiTestBed, key: string, period: string, language: string): Promise<{ asOf: string; figures: Figure[] }> {
  const response = await bed.request(`/v1/analytics/briefing?period=${period}`, { key, headers: { 'accept-language': language } });
  expect(response.status, response.text).toBe(200);
  return response.body as { asOf: string; figures: Figure[] };
}

/** A CSV parser written for the test, independent of the writer: quoted cells, doubled quotes, CRLF records. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(cell);
      cell = '';
    } else if (char === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i += 1;
    } else cell += char;
  }
  expect(cell).toBe('');
  expect(row).toEqual([]);
  return rows;
}

/** What the specification asks a cell to be, written independently of the service's writer. */
export function expectedCell(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

export async function auditOf(bed: ApiTestBed, exportId: string) {
  return bed.database.pool.any(sql.type(z.object({ actor: z.string(), action: z.string(), details: z.record(z.unknown()) }))`
    SELECT actor, action, details FROM audit_trail WHERE export_id = ${exportId} ORDER BY entry_id
  `);
}

export async function jobRows(bed: ApiTestBed): Promise<number> {
  return bed.database.pool.oneFirst(sql.type(z.object({ count: z.number() }))`SELECT count(*)::int AS count FROM export_jobs`);
}

/**
 * The whole flow: POST → poll → ready → plain download; the bytes match checksum and size, the
 * file is the briefing of that period at build time, in the language of the request.
 */
export async function checkWholeFlow(bed: ApiTestBed, key: string, prefix: string, clock: ReturnType<typeof fixedClock>) {
  const posted = await postExport(bed, key, { body: JSON.stringify({ period: 'weekly' }), language: 'es' });
  expect(posted.status, posted.text).toBe(202);
  const accepted = posted.body as Json;
  expect(accepted).toEqual({ exportId: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'pending', reportType: 'briefing', period: 'weekly', requestedAt: clock.now().toISOString() });
  const exportId = String(accepted.exportId);
  expect(posted.headers.get('location')).toBe(`/v1/analytics/exports/${exportId}`);
  expect(posted.headers.get('x-ratelimit-limit')).not.toBeNull();

  const { job } = await pollUntilReady(bed, key, exportId);
  expect(job).toEqual({
    exportId,
    status: 'ready',
    reportType: 'briefing',
    period: 'weekly',
    requestedAt: clock.now().toISOString(),
    asOf: clock.now().toISOString(),
    byteSize: expect.any(Number),
    checksum: expect.stringMatching(/^[0-9a-f]{64}$/),
    downloadUrl: expect.any(String),
    downloadExpiresAt: expect.any(String),
  });
  const expiresAt = Date.parse(job.downloadExpiresAt ?? '');
  // The full 5 minutes after the poll, rounded up to the whole second both kinds of link carry.
  expect(expiresAt).toBeGreaterThanOrEqual(clock.now().getTime() + 5 * minute);
  expect(expiresAt).toBeLessThan(clock.now().getTime() + 5 * minute + 1000);

  const file = await download(job.downloadUrl ?? '');
  expect(file.status).toBe(200);
  expect(createHash('sha256').update(file.bytes).digest('hex')).toBe(job.checksum);
  expect(file.bytes.length).toBe(job.byteSize);
  expect(file.headers.get('content-disposition')).toBe('attachment; filename="management-briefing-weekly.csv"');
  expect([...file.bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);

  // The file's rows are the weekly briefing, in Spanish, as it stood at build time (same asOf).
  const expected = await briefing(bed, key, 'weekly', 'es');
  expect(expected.asOf).toBe(job.asOf);
  const text = file.bytes.subarray(3).toString('utf8');
  expect(text.endsWith('\r\n')).toBe(true);
  expect(text.replaceAll('\r\n', '').includes('\n')).toBe(expected.figures.some((f) => f.label.includes('\n')));
  const rows = parseCsv(text);
  expect(rows[0]).toEqual(['metric', 'dimension', 'label', 'value', 'unit', 'evidenceId']);
  expect(rows.slice(1)).toEqual(
    expected.figures.map((f) => [f.metric, f.dimension ?? '', f.label, f.value === null ? '' : String(f.value), f.unit, f.evidenceId].map(expectedCell)),
  );
  expect(rows.length).toBeGreaterThan(8);
  expect(rows.some((row) => row[2] === 'Pedidos aún no despachados')).toBe(true);

  const audit = await auditOf(bed, exportId);
  expect(audit).toEqual([
    { actor: prefix, action: 'export.requested', details: { reportType: 'briefing', period: 'weekly', language: 'es' } },
    {
      actor: 'worker',
      action: 'export.ready',
      details: { reportType: 'briefing', period: 'weekly', byteSize: job.byteSize, checksum: job.checksum, asOf: job.asOf, attempt: 1 },
    },
  ]);

  // A new link on every poll, each valid 5 minutes after its own poll.
  clock.advance(2000);
  const again = await poll(bed, key, exportId);
  expect(again.downloadUrl).not.toBe(job.downloadUrl);
  expect(Date.parse(again.downloadExpiresAt ?? '')).toBeGreaterThan(expiresAt);
  expect((await download(again.downloadUrl ?? '')).bytes.equals(file.bytes)).toBe(true);
  return { exportId, job };
}
