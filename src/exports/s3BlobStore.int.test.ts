import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3Server, type S3TestServer } from '../../test/support/s3Server.js';
import type { StoredFile } from './blobStore.js';
import { createS3BlobStore, type S3BlobStore } from './s3BlobStore.js';

const csv = Buffer.from('\ufeffitem,quantity\r\n"Gloves, nitrile",12\r\n', 'utf8');
const fileOf = (key: string): StoredFile => ({ key, fileName: 'management-briefing-daily.csv', contentType: 'text/csv; charset=utf-8' });
const keyOf = (exportId: string) => `exports/dGVuYW50LWE/${exportId}/management-briefing-daily.csv`;

describe('S3 blob store (against s3rver)', () => {
  let server: S3TestServer;
  let store: S3BlobStore;

  beforeAll(async () => {
    server = await startS3Server('exports-int-test');
    store = createS3BlobStore({ bucket: server.bucket, endpoint: server.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: server.credentials });
  });

  afterAll(async () => {
    await store.close();
    await server.close();
  });

  it('stores the bytes and hands them out through a presigned link that needs no header', async () => {
    const file = fileOf(keyOf('round-trip'));
    await store.put(file, csv);
    const now = new Date();
    const link = await store.link(file, now);
    const response = await fetch(link.url);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).equals(csv)).toBe(true);
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="management-briefing-daily.csv"');
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const extra = now.getTime() % 1000 === 0 ? 0 : 1;
    expect(link.expiresAt.getTime()).toBe(Math.floor(now.getTime() / 1000) * 1000 + (300 + extra) * 1000);
    expect(link.url).toContain(`X-Amz-Expires=${300 + extra}`);
  });

  it('keeps a link made between seconds working for the full five minutes after the poll', async () => {
    const file = fileOf(keyOf('between-seconds'));
    await store.put(file, csv);
    const polledAt = new Date('2026-11-01T10:00:00.750Z');
    const link = await store.link(file, polledAt);
    expect(link.url).toContain('X-Amz-Date=20261101T100000Z');
    expect(link.url).toContain('X-Amz-Expires=301');
    expect(link.expiresAt.toISOString()).toBe('2026-11-01T10:05:01.000Z');
    expect(link.expiresAt.getTime()).toBeGreaterThanOrEqual(polledAt.getTime() + 5 * 60 * 1000);
  });

  it('refuses a link signed more than five minutes ago', async () => {
    const file = fileOf(keyOf('expired'));
    await store.put(file, csv);
    const link = await store.link(file, new Date(Date.now() - 6 * 60 * 1000));
    const response = await fetch(link.url);
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('Request has expired');
  });

  it('issues a different link at a different time', async () => {
    const file = fileOf(keyOf('two-links'));
    const first = await store.link(file, new Date('2026-11-01T10:00:00Z'));
    const second = await store.link(file, new Date('2026-11-01T10:00:01Z'));
    expect(first.url).not.toBe(second.url);
    expect(second.expiresAt.getTime() - first.expiresAt.getTime()).toBe(1000);
  });

  it('deletes idempotently; a deleted file is no longer served', async () => {
    const file = fileOf(keyOf('deleted'));
    await store.put(file, csv);
    const link = await store.link(file, new Date());
    expect((await fetch(link.url)).status).toBe(200);
    await store.delete(file.key);
    const after = await fetch(link.url);
    expect(after.status).not.toBe(200);
    await after.arrayBuffer();
    await expect(store.delete(file.key)).resolves.toBeUndefined();
    await expect(store.delete(keyOf('never-stored'))).resolves.toBeUndefined();
  });

  it('rejects malformed keys before calling S3', async () => {
    await expect(store.put(fileOf('exports/../secret.csv'), csv)).rejects.toThrow('invalid storage key');
    await expect(store.link(fileOf('/exports/a.csv'), new Date())).rejects.toThrow('invalid storage key');
    await expect(store.delete('exports/a b.csv')).rejects.toThrow('invalid storage key');
  });

  it('checkBucket passes for the bucket and names S3_BUCKET when the bucket is missing', async () => {
    await expect(store.checkBucket()).resolves.toBeUndefined();
    const missing = createS3BlobStore({ bucket: 'no-such-bucket', endpoint: server.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: server.credentials });
    try {
      const error: unknown = await missing.checkBucket().then(() => undefined, (caught: unknown) => caught);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(/S3_BUCKET/);
      expect((error as Error).message).toContain('no-such-bucket');
      expect((error as Error).message).not.toContain(server.credentials.secretAccessKey);
    } finally {
      await missing.close();
    }
  });

  it('checkBucket names S3_BUCKET when the service cannot be reached', async () => {
    const unreachable = createS3BlobStore({
      bucket: server.bucket,
      endpoint: 'http://127.0.0.1:9',
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: server.credentials,
    });
    try {
      await expect(unreachable.checkBucket()).rejects.toThrow(/S3_BUCKET.*exports-int-test/);
    } finally {
      await unreachable.close();
    }
  });
});
