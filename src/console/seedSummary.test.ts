import { describe, expect, it } from 'vitest';
import { newEvent } from '../events/index.js';
import { createSummaryCollector } from './seedSummary.js';

const at = '2025-11-01T08:00:00.000Z';
const eventId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

function boxes(tenantId: string, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    streamName: `supply.box-${tenantId}.box_${i}`,
    expectedRevision: 'no_stream' as const,
    events: [
      newEvent(
        'BoxRegistered',
        { boxId: `box_${i}`, code: `BX-${i}`, catalogItemId: 'itm_1', warehouseId: 'wh_1', status: 'active', origin: { type: 'count' } },
        { eventId: eventId(1_000 + i), tenantId, occurredAt: at },
      ),
    ],
  }));
}

function workspace(tenantId: string) {
  return {
    streamName: `supply.workspace-${tenantId}`,
    expectedRevision: 'no_stream' as const,
    events: [newEvent('WorkspaceCreated', { workspaceId: tenantId, name: 'Clinic' }, { eventId: eventId(1), tenantId, occurredAt: at })],
  };
}

describe('createSummaryCollector', () => {
  it('lists every id per tenant, in creation order, when not sampling', () => {
    const collector = createSummaryCollector(undefined);
    for (const write of [workspace('ws_a'), ...boxes('ws_a', 3), workspace('ws_b')]) collector.observe(write);
    expect(collector.summary()).toEqual({
      tenants: [
        { workspaceId: 'ws_a', memberIds: [], members: [], clinicIds: [], warehouseIds: [], orderIds: [], boxIds: ['box_0', 'box_1', 'box_2'], itemIds: [] },
        { workspaceId: 'ws_b', memberIds: [], members: [], clinicIds: [], warehouseIds: [], orderIds: [], boxIds: [], itemIds: [] },
      ],
    });
  });

  it('samples the first and the most recent ids when there are more than the limit', () => {
    const collector = createSummaryCollector(4);
    for (const write of [workspace('ws_a'), ...boxes('ws_a', 10)]) collector.observe(write);
    expect(collector.summary().tenants[0]?.boxIds).toEqual(['box_0', 'box_1', 'box_8', 'box_9']);
  });
});
