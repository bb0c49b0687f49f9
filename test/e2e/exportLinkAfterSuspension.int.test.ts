import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { testAsOf, type ApiTestBed } from '../support/apiTestBed.js';
import { useApiBed } from '../support/useApiBed.js';
import { startS3Server, useS3Credentials, type S3TestServer } from '../support/s3Server.js';
import { services } from '../support/services.js';
import { download, pollUntilReady, requestExport } from './exportFlows.js';

/**
 * The decision recorded in the OpenAPI document and docs/integrators.md: a download link is a
 * capability that carries no key and works for its 5 minutes whatever happens to the workspace
 * meanwhile (S3's presigned links cannot be revoked, and local links behave alike); a suspension
 * stops every keyed request at once, the poll that would give a new link included.
 */
describe.each(['local', 's3'] as const)('a download link of a workspace suspended after the poll (%s files)', (storage) => {
  let bed: ApiTestBed;
  let s3: S3TestServer | undefined;
  let restoreCredentials: (() => void) | undefined;
  let key: string;
  let workspaceId: string;
  // S3 judges a presigned link's expiry by real time; local links by the API's clock.
  const clock = fixedClock(storage === 'local' ? new Date(Date.parse(testAsOf) + 9.5 * 3_600_000) : new Date());

  beforeAll(async () => {
    if (storage === 's3') {
      s3 = await startS3Server(`suspended-${randomUUID().slice(0, 8)}`);
      restoreCredentials = useS3Credentials();
    }
  });
  afterAll(async () => {
    await s3?.close();
    restoreCredentials?.();
  });
  const given = useApiBed({ scopes: ['analytics:read'], bed: () => ({ tenants: 1, days: 7, clock, ...(s3 ? { env: s3.env } : {}) }) });
  beforeAll(() => {
    ({ bed, key } = given);
    workspaceId = given.tenant.workspaceId;
  });

  test.runIf(services.postgres)('the link still downloads the file within its 5 minutes; the poll answers 401 at once', async () => {
    const exportId = await requestExport(bed, key);
    const { job } = await pollUntilReady(bed, key, exportId);
    expect(bed.exports.storeKind).toBe(storage);
    await bed.console.suspendTenant({ workspaceId });
    await bed.settle();

    const refused = await bed.request(`/v1/analytics/exports/${exportId}`, { key });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: 'api_keys.invalid' });

    const file = await download(job.downloadUrl ?? '');
    expect(file.status).toBe(200);
    expect(file.bytes.length).toBe(job.byteSize);
    expect(createHash('sha256').update(file.bytes).digest('hex')).toBe(job.checksum);
    if (storage === 'local') {
      // Its life ends as it would have anyway.
      clock.advance(5 * 60_000 + 1000);
      expect((await download(job.downloadUrl ?? '')).status).toBe(404);
    }
  });
});
