import { describe, expect, test } from 'vitest';
import { allProjections } from '../../projections/index.js';
import { issuableScopes } from '../../src/keys/scopes.js';
import { fixedClock } from '../../src/platform/clock.js';
import { loadGenerations } from '../../src/projecting/generations.js';
import { replayProjections } from '../../src/projecting/replay.js';
import { testAsOf } from '../support/apiTestBed.js';
import { useApiBed } from '../support/useApiBed.js';
import { silentLogger } from '../support/databases.js';

const clock = fixedClock(new Date(Date.parse(testAsOf) + 9.5 * 3_600_000));

const collections = [
  '/v1/me',
  '/v1/clinics',
  '/v1/warehouses',
  '/v1/catalog/categories',
  '/v1/catalog/items',
  '/v1/inventory/balances',
  '/v1/orders',
  '/v1/orders?limit=7',
  '/v1/fulfillments',
  // Change feeds: the same items at the same log positions, so the same cursors.
  '/v1/orders/changes',
  '/v1/orders/changes?limit=7',
  '/v1/fulfillments/changes?limit=5',
  '/v1/inventory/balances/changes',
  '/v1/analytics/briefing',
  '/v1/analytics/approval-backlog',
  '/v1/analytics/clinics/comparison',
  '/v1/analytics/consumption-trend',
  '/v1/analytics/cycle-time',
  '/v1/analytics/exceptions',
  '/v1/analytics/metrics/LOW_STOCK',
  '/v1/analytics/metrics/PENDING_ORDERS',
];

/** The first value of `field` in a JSON text (ids of list answers, to ask for their details). */
function firstId(text: string, field: string): string {
  const match = new RegExp(`"${field}":"([^"]+)"`).exec(text);
  if (!match?.[1]) throw new Error(`no ${field} in ${text.slice(0, 200)}`);
  return match[1];
}

describe('a rebuild changes no /v1 answer (small seed, real Postgres, live projector)', () => {
  const given = useApiBed({ scopes: issuableScopes, bed: { tenants: 2, clock }, bootTimeoutMs: 240_000 });

  async function answers(): Promise<Record<string, string>> {
    const { bed, key } = given;
    const result: Record<string, string> = {};
    const ask = async (path: string) => {
      const response = await bed.request(path, { key });
      expect(response.status, path).toBe(200);
      // Only these two may differ: when it was computed and which request asked.
      result[path] = response.text.replace(/"asOf":"[^"]*"/g, '"asOf":…').replace(/"requestId":"[^"]*"/g, '"requestId":…');
      return response.text;
    };
    for (const path of collections) await ask(path);
    const orderId = firstId(await ask('/v1/orders'), 'orderId');
    await ask(`/v1/orders/${encodeURIComponent(orderId)}`);
    const itemId = firstId(await ask('/v1/catalog/items'), 'itemId');
    await ask(`/v1/catalog/items/${encodeURIComponent(itemId)}`);
    const boxId = firstId(await ask('/v1/inventory/balances'), 'boxId');
    await ask(`/v1/inventory/boxes/${encodeURIComponent(boxId)}/movements`);
    const fulfilledOrderId = firstId(await ask('/v1/fulfillments'), 'orderId');
    await ask(`/v1/fulfillments/${encodeURIComponent(fulfilledOrderId)}`);
    return result;
  }

  test('the answers before and after a full replay (trusted, side by side; the ledger loaded from the log by Postgres, then by COPY) are byte-identical but for asOf and requestId', async () => {
    const { bed } = given;
    const before = await answers();
    const generationsBefore = (await loadGenerations(bed.database.pool, ['active'])).map((g) => g.generation);
    for (const loadFromLog of [true, false]) {
      const result = await replayProjections({
        pool: bed.database.pool,
        eventStore: bed.eventStore,
        projections: allProjections,
        logger: silentLogger,
        parallelism: 2,
        bulkLoad: { connectionUri: bed.database.url },
        loadFromLog,
      });
      expect(result.projections.find((p) => p.projection === 'stock_movements')?.fromLog).toBe(loadFromLog);
      await bed.settle();
      expect(await answers()).toEqual(before);
    }
    const generationsAfter = (await loadGenerations(bed.database.pool, ['active'])).map((g) => g.generation);
    expect(generationsAfter).toEqual(generationsBefore.map((generation) => generation + 2));
  }, 300_000);
});
