import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { tenantsProjection } from '../../projections/tenants/projection.js';
import { createProjectionTestBed, event, testTenant, type ProjectionTestBed } from '../../test/support/projectionTestBed.js';
import { systemClock } from '../platform/clock.js';
import { checkKey } from './keyAuthentication.js';
import { issueKey } from './keyIssuer.js';

describe('why a key is refused while its holder is not in the read models (real Postgres)', () => {
  let bed: ProjectionTestBed | undefined;
  beforeAll(async () => {
    bed = await createProjectionTestBed([tenantsProjection]);
  });
  afterAll(async () => bed?.close());

  test('given a key issued before the projector applied its workspace and member, then it is refused as tenant_unknown, then member_unknown, then accepted', async () => {
    if (bed === undefined) throw new Error('no database');
    const { pool } = bed;
    const memberId = 'm-key-holder';
    // The console's records are what the command line asks; here the requester is taken as checked.
    const { key, prefix } = await issueKey({ pool, clock: systemClock, checkRequester: async () => undefined }, { workspaceId: testTenant, memberId, scopes: ['orders:read'] });

    expect(await checkKey(pool, key)).toEqual({ refusal: { reason: 'tenant_unknown', keyPrefix: prefix } });
    await bed.project([event('WorkspaceCreated', { workspaceId: testTenant, name: 'Clínica Sorriso' })]);
    expect(await checkKey(pool, key)).toEqual({ refusal: { reason: 'member_unknown', keyPrefix: prefix } });
    await bed.project([
      event(
        'MemberJoined',
        { memberId, name: 'Ana Souza', email: 'ana@example.test', role: 'purchasing', permissions: ['orders.read'], clinicIds: ['c-1'] },
        { occurredAt: '2026-11-01T08:00:00.000Z' },
      ),
    ]);
    expect((await checkKey(pool, key)).principal).toMatchObject({ tenantId: testTenant, memberId, prefix });
    await bed.project([event('WorkspaceSuspended', { workspaceId: testTenant, reason: 'unpaid' })]);
    expect(await checkKey(pool, key)).toEqual({ refusal: { reason: 'tenant_suspended', keyPrefix: prefix } });
  });
});
