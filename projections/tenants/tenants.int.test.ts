import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/platform/sql.js';
import { createProjectionTestBed, event, otherTenant, rawEvent, testTenant, type ProjectionTestBed } from '../../test/support/projectionTestBed.js';
import { tenantsProjection } from './projection.js';
import { memberAccess, tenantStatus } from './queries.js';

const joined = (memberId: string, permissions: string[] = ['orders.read'], tenantId = testTenant) =>
  event(
    'MemberJoined',
    { memberId, name: 'Ana Souza', email: 'ana@example.test', role: 'purchasing', permissions, clinicIds: ['c-1'] },
    { tenantId, occurredAt: '2026-11-01T08:00:00.000Z' },
  );

/** A stored event whose recording time differs from its occurrence, as in the real log. */
const recorded = (type: string, data: unknown, recordedAt: string) => ({ ...rawEvent(type, data), recordedAt });

describe('tenants projection', () => {
  let bed: ProjectionTestBed;
  beforeAll(async () => {
    bed = await createProjectionTestBed([tenantsProjection]);
  });
  afterAll(async () => bed?.close());

  it('given a workspace created, suspended and reactivated, reports its latest status per tenant', async () => {
    await bed.project([
      event('WorkspaceCreated', { workspaceId: testTenant, name: 'Clínica Sorriso' }),
      event('WorkspaceCreated', { workspaceId: otherTenant, name: 'Praxis Nord' }, { tenantId: otherTenant }),
      event('WorkspaceSuspended', { workspaceId: otherTenant, reason: 'unpaid' }, { tenantId: otherTenant }),
    ]);
    expect(await tenantStatus(bed.pool, testTenant)).toEqual({ status: 'active' });
    expect(await tenantStatus(bed.pool, otherTenant)).toEqual({ status: 'suspended' });
    expect(await tenantStatus(bed.pool, 'tenant-unknown')).toBeUndefined();

    await bed.project([
      event('WorkspaceSuspended', { workspaceId: testTenant }),
      event('WorkspaceReactivated', { workspaceId: otherTenant }, { tenantId: otherTenant }),
    ]);
    expect(await tenantStatus(bed.pool, testTenant)).toEqual({ status: 'suspended' });
    expect(await tenantStatus(bed.pool, otherTenant)).toEqual({ status: 'active' });

    await bed.project([event('WorkspaceReactivated', { workspaceId: testTenant })]);
    expect(await tenantStatus(bed.pool, testTenant)).toEqual({ status: 'active' });
  });

  it('given a member joined, answers status and permissions without lastDeactivatedAt', async () => {
    await bed.project([joined('m-joined', ['orders.read', 'integrations.manage'])]);
    const access = await memberAccess(bed.pool, testTenant, 'm-joined');
    expect(access).toEqual({ status: 'active', permissions: ['orders.read', 'integrations.manage'] });
    expect(Object.hasOwn(access ?? {}, 'lastDeactivatedAt')).toBe(false);
    expect(await memberAccess(bed.pool, testTenant, 'm-unknown')).toBeUndefined();
    expect(await memberAccess(bed.pool, otherTenant, 'm-joined')).toBeUndefined();
  });

  it('given a member suspended, then reactivated, keeps the recording time of the suspension', async () => {
    await bed.project([joined('m-leave')]);
    await bed.project([recorded('MemberSuspended', { memberId: 'm-leave', reason: 'Leave of absence' }, '2026-11-02T10:00:00.123Z')]);
    expect(await memberAccess(bed.pool, testTenant, 'm-leave')).toEqual({
      status: 'suspended',
      permissions: ['orders.read'],
      lastDeactivatedAt: '2026-11-02T10:00:00.123Z',
    });

    await bed.project([recorded('MemberReactivated', { memberId: 'm-leave' }, '2026-11-03T10:00:00.000Z')]);
    expect(await memberAccess(bed.pool, testTenant, 'm-leave')).toEqual({
      status: 'active',
      permissions: ['orders.read'],
      lastDeactivatedAt: '2026-11-02T10:00:00.123Z',
    });
  });

  it('given joined, suspended, reactivated and suspended again in one batch, keeps the latest deactivation', async () => {
    await bed.project([
      joined('m-twice'),
      recorded('MemberSuspended', { memberId: 'm-twice' }, '2026-11-04T10:00:00.000Z'),
      recorded('MemberReactivated', { memberId: 'm-twice' }, '2026-11-05T10:00:00.000Z'),
      recorded('MemberSuspended', { memberId: 'm-twice' }, '2026-11-06T10:00:00.000Z'),
      recorded('MemberReactivated', { memberId: 'm-twice' }, '2026-11-07T10:00:00.000Z'),
    ]);
    expect(await memberAccess(bed.pool, testTenant, 'm-twice')).toEqual({
      status: 'active',
      permissions: ['orders.read'],
      lastDeactivatedAt: '2026-11-06T10:00:00.000Z',
    });
  });

  it('given a member removed, stays removed even if a later event would reactivate them', async () => {
    await bed.project([joined('m-gone'), joined('m-gone-later')]);
    await bed.project([
      recorded('MemberRemoved', { memberId: 'm-gone' }, '2026-11-08T10:00:00.000Z'),
      recorded('MemberReactivated', { memberId: 'm-gone' }, '2026-11-09T10:00:00.000Z'),
      recorded('MemberSuspended', { memberId: 'm-gone-later' }, '2026-11-08T11:00:00.000Z'),
      recorded('MemberRemoved', { memberId: 'm-gone-later' }, '2026-11-08T12:00:00.000Z'),
    ]);
    await bed.project([recorded('MemberReactivated', { memberId: 'm-gone-later' }, '2026-11-09T12:00:00.000Z')]);
    expect(await memberAccess(bed.pool, testTenant, 'm-gone')).toEqual({
      status: 'removed',
      permissions: ['orders.read'],
      lastDeactivatedAt: '2026-11-08T10:00:00.000Z',
    });
    expect(await memberAccess(bed.pool, testTenant, 'm-gone-later')).toEqual({
      status: 'removed',
      permissions: ['orders.read'],
      lastDeactivatedAt: '2026-11-08T12:00:00.000Z',
    });
  });

  it('stores no member name or email', async () => {
    const columns = await bed.pool.anyFirst(sql.type(z.object({ column_name: z.string() }))`
      SELECT column_name FROM information_schema.columns
      WHERE table_schema = 'read_models' AND table_name = 'members'
      ORDER BY ordinal_position
    `);
    expect(columns).toEqual(['tenant_id', 'member_id', 'role', 'permissions', 'status', 'last_deactivated_at', 'joined_at', 'updated_at']);
  });

  it('dead-letters changes to unknown members and workspaces and a foreign workspace id, and applies the rest', async () => {
    // Its own workspace and members, so what it finds is what it set up whatever ran before.
    const foreign = 'tenant-foreign';
    await bed.project([event('WorkspaceCreated', { workspaceId: foreign, name: 'Praxis Süd' }, { tenantId: foreign }), joined('m-twice-joined')]);
    const letters = await bed.project([
      event('MemberSuspended', { memberId: 'm-missing' }),
      event('WorkspaceSuspended', { workspaceId: 'tenant-missing' }, { tenantId: 'tenant-missing' }),
      event('WorkspaceSuspended', { workspaceId: foreign }),
      joined('m-twice-joined'),
      rawEvent('MemberJoined', { memberId: 'm-bad' }),
      joined('m-after'),
    ]);
    expect(letters.map((l) => [l.eventType, l.projection])).toEqual([
      ['MemberSuspended', 'tenants'],
      ['WorkspaceSuspended', 'tenants'],
      ['WorkspaceSuspended', 'tenants'],
      ['MemberJoined', 'tenants'],
      ['MemberJoined', 'tenants'],
    ]);
    expect(letters[0]?.error).toMatch(/1 row\(s\) expected, 0 found/);
    expect(letters[1]?.error).toMatch(/1 row\(s\) expected, 0 found/);
    expect(letters[2]?.error).toMatch(/workspace tenant-foreign in an event of tenant tenant-a/);
    expect(await memberAccess(bed.pool, testTenant, 'm-after')).toEqual({ status: 'active', permissions: ['orders.read'] });
    expect(await tenantStatus(bed.pool, foreign)).toEqual({ status: 'active' });
  });

  it('gives the same tables one event at a time as in batches', async () => {
    // Its own events, so the comparison covers workspaces and members whatever ran before.
    const tenantId = 'tenant-digest';
    const t = { tenantId };
    await bed.project(
      [
        event('WorkspaceCreated', { workspaceId: tenantId, name: 'Clínica Digest' }, t),
        joined('m-digest', ['orders.read'], tenantId),
        event('MemberSuspended', { memberId: 'm-digest' }, t),
        event('MemberReactivated', { memberId: 'm-digest' }, t),
        event('WorkspaceSuspended', { workspaceId: tenantId }, t),
      ],
      { batchSize: 2 },
    );
    for (const row of await bed.oneByOneDigestsMatch()) expect(row.oneByOne, row.table).toBe(row.batched);
  });
});
