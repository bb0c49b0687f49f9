import { createHmac } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import { createRawClient } from './rawHttp.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listen } from '../../src/api/listen.js';
import { errorHandler, notFound } from '../../src/api/problems/errorHandler.js';
import { requestState } from '../../src/api/requestState.js';
import { fixedClock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/logger.js';
import type { StoredFile } from '../../src/exports/blobStore.js';
import { downloadRoute } from '../../src/exports/downloadRoute.js';
import { isStorageKey } from '../../src/exports/blobStore.js';
import { createLocalBlobStore, type DownloadSource, type LocalBlobStore } from '../../src/exports/localBlobStore.js';

const errorTypeBase = 'https://problems.test.example/v1';
const secret = 'a-test-signing-secret-of-at-least-32-characters';
const start = '2026-11-01T10:00:00.000Z';
const fiveMinutes = 5 * 60 * 1000;
// A BOM, a comma inside quotes, CRLF and non-ASCII: bytes a text round trip would change.
const csv = Buffer.from('\ufeffitem,quantity\r\n"Guantes, nitrilo",12\r\nAlgodão,3\r\n', 'utf8');
const otherCsv = Buffer.from('\ufeffitem,quantity\r\nOther,1\r\n', 'utf8');

const fileOf = (exportId: string, period: 'daily' | 'weekly' = 'daily'): StoredFile => ({
  key: `exports/dGVuYW50LWE/${exportId}/management-briefing-${period}.csv`,
  fileName: `management-briefing-${period}.csv`,
  contentType: 'text/csv; charset=utf-8',
});

/** Every file name under a directory, recursively, relative to it. */
async function listFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => path.relative(directory, path.join(entry.parentPath, entry.name)));
}

describe('local blob store and download route', () => {
  const clock = fixedClock(start);
  let root: string;
  let directory: string;
  let store: LocalBlobStore;
  let server: Server;
  let baseUrl: string;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'local-blob-store-'));
    directory = path.join(root, 'exports-root');
    // The links need the port, so the store is built once the server listens; the route reaches it through this.
    const source: DownloadSource = { verify: (...args) => store.verify(...args), read: (key) => store.read(key) };
    const app = express();
    app.disable('x-powered-by');
    app.set('etag', false);
    app.set('query parser', 'simple');
    app.use(requestState);
    app.use('/downloads', downloadRoute({ store: source, clock }));
    app.use(notFound);
    app.use(errorHandler(errorTypeBase, createLogger('silent')));
    server = await listen(app, { port: 0, host: '127.0.0.1', errorTypeBase });
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    store = createLocalBlobStore({ directory, baseUrl: `${baseUrl}/`, secret });
  });

  afterAll(async () => {
    await store.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(root, { recursive: true, force: true });
  });

  beforeEach(() => clock.set(start));
  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('serves the exact bytes with download headers through the link', async () => {
    const file = fileOf('round-trip');
    await store.put(file, csv);
    const link = await store.link(file, clock.now());
    expect(link.url.startsWith(`${baseUrl}/downloads/${file.key}?expires=`)).toBe(true);
    expect(link.expiresAt.toISOString()).toBe('2026-11-01T10:05:00.000Z');
    expect(new URL(link.url).searchParams.get('expires')).toBe(String(link.expiresAt.getTime() / 1000));

    const response = await fetch(link.url);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).equals(csv)).toBe(true);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-length')).toBe(String(csv.length));
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="management-briefing-daily.csv"');
    expect(response.headers.get('cache-control')).toBe('private, no-store');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('answers HEAD with the headers and no body', async () => {
    const file = fileOf('head', 'weekly');
    await store.put(file, csv);
    const response = await fetch((await store.link(file, clock.now())).url, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String(csv.length));
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="management-briefing-weekly.csv"');
    expect((await response.arrayBuffer()).byteLength).toBe(0);
  });

  it('keeps a link valid for five minutes and no longer', async () => {
    const file = fileOf('expiry');
    await store.put(file, csv);
    const link = await store.link(file, clock.now());

    clock.advance(fiveMinutes - 1000);
    const lastSecond = await fetch(link.url);
    expect(lastSecond.status).toBe(200);
    await lastSecond.arrayBuffer();

    clock.advance(1000);
    const atExpiry = await fetch(link.url);
    expect(atExpiry.status).toBe(404);
    await atExpiry.arrayBuffer();

    clock.advance(60_000);
    const after = await fetch(link.url);
    expect(after.status).toBe(404);
    expect(after.headers.get('cache-control')).toBe('no-store');
    expect(await after.json()).toMatchObject({ status: 404, code: 'common.not_found' });
  });

  it('works for the full five minutes after a poll between seconds, and reports exactly when it stops', async () => {
    const file = fileOf('between-seconds');
    const polledAt = new Date('2026-11-01T10:00:00.750Z');
    const link = await store.link(file, polledAt);
    expect(link.expiresAt.toISOString()).toBe('2026-11-01T10:05:01.000Z');
    const url = new URL(link.url);
    const [expires, signature] = [url.searchParams.get('expires') ?? '', url.searchParams.get('signature') ?? ''];
    expect(expires).toBe(String(Date.parse('2026-11-01T10:05:01.000Z') / 1000));
    expect(store.verify(file.key, expires, signature, new Date(polledAt.getTime() + fiveMinutes))).toBe(true);
    expect(store.verify(file.key, expires, signature, new Date(link.expiresAt.getTime() - 1))).toBe(true);
    expect(store.verify(file.key, expires, signature, link.expiresAt)).toBe(false);
  });

  it('answers every bad or dead link with the same 404, revealing nothing', async () => {
    const file = fileOf('target');
    const other = fileOf('other');
    await store.put(file, csv);
    await store.put(other, otherCsv);
    const gone = fileOf('gone');
    await store.put(gone, csv);
    const link = new URL((await store.link(file, clock.now())).url);
    const goneLink = (await store.link(gone, clock.now())).url;
    await store.delete(gone.key);
    const expires = link.searchParams.get('expires') ?? '';
    const signature = link.searchParams.get('signature') ?? '';
    const flipped = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;
    const at = (key: string, query: string) => `${baseUrl}/downloads/${key}${query}`;

    const bad: Record<string, string> = {
      'signature changed in one character': at(file.key, `?expires=${expires}&signature=${flipped}`),
      'expires changed': at(file.key, `?expires=${Number(expires) + 60}&signature=${signature}`),
      'key changed to another existing file': at(other.key, `?expires=${expires}&signature=${signature}`),
      'signature missing': at(file.key, `?expires=${expires}`),
      'expires missing': at(file.key, `?signature=${signature}`),
      'no query': at(file.key, ''),
      'signature repeated': at(file.key, `?expires=${expires}&signature=${signature}&signature=${signature}`),
      'expires repeated': at(file.key, `?expires=${expires}&expires=${expires}&signature=${signature}`),
      'expires not a number': at(file.key, `?expires=${expires}.0&signature=${signature}`),
      'signature truncated': at(file.key, `?expires=${expires}&signature=${signature.slice(0, -1)}`),
      'file gone': goneLink,
      'no key at all': `${baseUrl}/downloads/?expires=${expires}&signature=${signature}`,
    };
    const expected = await fetch(link.toString().replace('signature=', 'signature=x'));
    const expectedBody = (await expected.json()) as Record<string, unknown>;
    const withoutVolatile = ({ requestId: _requestId, instance: _instance, ...rest }: Record<string, unknown>) => rest;
    expect(expectedBody).toMatchObject({ status: 404, code: 'common.not_found' });

    for (const [what, url] of Object.entries(bad)) {
      const response = await fetch(url);
      const body = (await response.json()) as Record<string, unknown>;
      expect({ what, status: response.status }).toEqual({ what, status: 404 });
      expect({ what, body: withoutVolatile(body) }).toEqual({ what, body: withoutVolatile(expectedBody) });
      expect({ what, type: response.headers.get('content-type') }).toEqual({ what, type: expected.headers.get('content-type') });
      expect({ what, cache: response.headers.get('cache-control') }).toEqual({ what, cache: 'no-store' });
      expect({ what, disposition: response.headers.get('content-disposition') }).toEqual({ what, disposition: null });
    }

    const valid = await fetch(link);
    expect(valid.status).toBe(200);
    expect(Buffer.from(await valid.arrayBuffer()).equals(csv)).toBe(true);
  });

  it('never serves a file outside the directory, even for a correctly signed traversal key', async () => {
    await writeFile(path.join(root, 'outside.csv'), csv);
    const file = fileOf('inside');
    await store.put(file, csv);
    const expires = String(Date.parse(start) / 1000 + 300);
    const signed = (key: string) =>
      `expires=${expires}&signature=${createHmac('sha256', secret).update(`export-download:v1\n${key}\n${expires}`).digest('base64url')}`;
    // The test signs like the store does, to show the key check does not rest on the secret.
    expect((await fetch(`${baseUrl}/downloads/${file.key}?${signed(file.key)}`)).status).toBe(200);
    const raw = createRawClient(baseUrl);
    try {
      for (const [key, sentPath] of [
        ['../outside.csv', '../outside.csv'],
        ['exports/../../outside.csv', 'exports/../../outside.csv'],
        ['../outside.csv', '%2e%2e/outside.csv'],
        ['exports/../../outside.csv', 'exports%2F..%2F..%2Foutside.csv'],
      ] as const) {
        const response = await raw.send({ path: `/downloads/${sentPath}?${signed(key)}` });
        expect({ sentPath, status: response.status }).toEqual({ sentPath, status: 404 });
        expect(response.text).not.toContain('item,quantity');
      }
    } finally {
      raw.close();
      await rm(path.join(root, 'outside.csv'));
    }
  });

  it('refuses links signed with another secret', async () => {
    const file = fileOf('other-secret');
    await store.put(file, csv);
    const forger = createLocalBlobStore({ directory, baseUrl, secret: 'another-secret-of-at-least-32-characters!' });
    const response = await fetch((await forger.link(file, clock.now())).url);
    expect(response.status).toBe(404);
    await response.arrayBuffer();
  });

  it('issues a new link at every moment', async () => {
    const file = fileOf('two-links');
    const first = await store.link(file, clock.now());
    clock.advance(1000);
    const second = await store.link(file, clock.now());
    expect(second.url).not.toBe(first.url);
    expect(second.expiresAt.getTime() - first.expiresAt.getTime()).toBe(1000);
  });

  it('verifies only well-formed values', async () => {
    const file = fileOf('verify');
    const now = clock.now();
    const link = new URL((await store.link(file, now)).url);
    const expires = link.searchParams.get('expires') ?? '';
    const signature = link.searchParams.get('signature') ?? '';
    expect(store.verify(file.key, expires, signature, now)).toBe(true);
    for (const badExpires of ['', '-1', '1e12', ' 1', `${expires} `, '0x10', '9'.repeat(13), `${expires}.0`, `0${expires}`]) {
      expect({ badExpires, valid: store.verify(file.key, badExpires, signature, now) }).toEqual({ badExpires, valid: false });
    }
    for (const badSignature of ['', `${signature}=`, `${signature}A`, signature.slice(0, -1), `${signature.slice(0, -1)}+`, 'A'.repeat(43)]) {
      expect({ badSignature, valid: store.verify(file.key, expires, badSignature, now) }).toEqual({ badSignature, valid: false });
    }
    expect(store.verify(`${file.key}/`, expires, signature, now)).toBe(false);
    expect(store.verify(fileOf('verify', 'weekly').key, expires, signature, now)).toBe(false);
  });

  it('rejects keys that are not plain relative paths', async () => {
    const bad = ['', '/exports/a.csv', 'exports/../../escape.csv', 'exports/./a.csv', '..', 'exports//a.csv', 'exports/a.csv/', 'exports/a b.csv', 'exports\\a.csv', 'exports/%2e%2e/a.csv', 'exports/ä.csv', `exports/${'a'.repeat(1100)}.csv`];
    for (const key of bad) {
      expect({ key, valid: isStorageKey(key) }).toEqual({ key, valid: false });
      await expect(store.put({ ...fileOf('x'), key }, csv)).rejects.toThrow('invalid storage key');
      await expect(store.link({ ...fileOf('x'), key }, clock.now())).rejects.toThrow('invalid storage key');
      await expect(store.delete(key)).rejects.toThrow('invalid storage key');
      expect(store.verify(key, '9999999999', 'A'.repeat(43), clock.now())).toBe(false);
      expect(await store.read(key)).toBeUndefined();
    }
    expect(isStorageKey(fileOf('ok').key)).toBe(true);
    expect(isStorageKey('exports/.hidden/a..b.csv')).toBe(true);
    // Nothing was written outside the directory.
    expect(await readdir(root)).toEqual([]);
  });

  it('writes atomically: no temporary file is left, a rewrite replaces the bytes, a failed write leaves nothing', async () => {
    const file = fileOf('atomic');
    await store.put(file, csv);
    await store.put(file, otherCsv);
    expect(await listFiles(directory)).toEqual([file.key]);
    expect((await store.read(file.key))?.equals(otherCsv)).toBe(true);

    // The target path is a directory, so the final rename fails after the temporary file was written.
    const blocked = fileOf('blocked');
    await mkdir(path.join(directory, blocked.key, 'inside'), { recursive: true });
    await writeFile(path.join(directory, blocked.key, 'inside', 'keep.txt'), 'x');
    await expect(store.put(blocked, csv)).rejects.toThrow();
    expect((await listFiles(directory)).sort()).toEqual([file.key, `${blocked.key}/inside/keep.txt`].sort());
  });

  it('deletes idempotently and removes the directories it leaves empty', async () => {
    const first = fileOf('first');
    const second = fileOf('second');
    await store.put(first, csv);
    await store.put(second, csv);
    await store.delete(first.key);
    await store.delete(first.key);
    await store.delete(fileOf('never-stored').key);
    expect(await listFiles(directory)).toEqual([second.key]);
    expect(await readdir(path.join(directory, 'exports', 'dGVuYW50LWE'))).toEqual(['second']);
    await store.delete(second.key);
    // The root itself stays.
    expect(await readdir(directory)).toEqual([]);
    expect(await store.read(second.key)).toBeUndefined();
    // A later put recreates what it needs.
    await store.put(second, csv);
    expect(await listFiles(directory)).toEqual([second.key]);
  });
});
