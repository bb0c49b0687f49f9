import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { allProjections } from '../projections/index.js';
import { createConsoleActions } from '../src/console/consoleActions.js';
import { decodeEvent, newEvent, streamNamePrefix, streams, type EventEnvelope } from '../src/events/index.js';
import type { EventStore, StreamWrite } from '../src/eventStore/eventStore.js';
import { issuableScopes } from '../src/keys/scopes.js';
import { systemClock } from '../src/platform/clock.js';
import { migrate } from '../src/platform/migrate.js';
import { sql } from '../src/platform/sql.js';
import { replayProjections } from '../src/projecting/replay.js';
import { waitForProjections } from '../src/projecting/status.js';
import {
  createBenchDatabase,
  historyParamsOf,
  issueBenchKey,
  note,
  openBenchStore,
  positiveInteger,
  round,
  seedBenchHistory,
  startChild,
  stopChild,
  type Child,
} from './benchSupport.js';
import type { BenchResult } from './run.js';

/**
 * Keeping an ERP in step with a workspace of many orders: today's full re-read of `GET /v1/orders`
 * against the change feed `GET /v1/orders/changes`, on real Postgres in a database of its own that
 * is dropped at the end:
 *
 *   npm run bench -- sync [--orders 20000] [--changed 100] [--rounds 3] [--scale medium] [--days 90]
 *                         [--seed 7] [--as-of 2026-01-05] [--port P]
 *
 * Setup (not measured): migrate, seed one workspace's history, then add submitted orders (copies of
 * a seeded one's first two events, new ids) until the workspace holds `--orders`, rebuild every
 * projection, VACUUM ANALYZE, issue a key; start `serve --roles api,projector` (request budget
 * raised) as a child process.
 *
 * Measured, over HTTP with limit=200, sequentially as one integrator would:
 *   1. first sync: `--rounds` alternating full walks of each (every page of the list; the feed from
 *      no cursor until hasMore is false), requests and seconds of each; the page cost of each is its
 *      walk's seconds / pages (median over the rounds), and ratio = feed page ÷ list page;
 *   2. `--changed` orders advanced by the console (one status event each), projected live;
 *   3. second sync: a full re-read of the list (today's way to learn what changed), and the feed
 *      from the cursor saved in 1, which must give exactly the changed orders.
 * Targets: the second sync by the feed takes at most 2 requests; a feed page costs at most 1.2
 * times a list page.
 */
export async function run(args: readonly string[]): Promise<BenchResult> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      orders: { type: 'string', default: '20000' },
      changed: { type: 'string', default: '100' },
      rounds: { type: 'string', default: '3' },
      scale: { type: 'string', default: 'medium' },
      tenants: { type: 'string', default: '1' },
      days: { type: 'string', default: '90' },
      seed: { type: 'string', default: '7' },
      'as-of': { type: 'string', default: '2026-01-05' },
      port: { type: 'string' },
    },
  });
  const params = historyParamsOf(values);
  const wantedOrders = positiveInteger('orders', values.orders);
  const changedCount = positiveInteger('changed', values.changed);
  const rounds = positiveInteger('rounds', values.rounds);

  execFileSync(process.execPath, ['bin/build.js'], { stdio: 'inherit' });
  const database = await createBenchDatabase();
  const children = new Set<Child>();
  const killAll = (): void => {
    for (const child of children) child.process.kill('SIGKILL');
  };
  process.once('exit', killAll);
  const setup = await openBenchStore(database);
  try {
    const { pool, store, logger } = setup;
    await migrate(pool, logger);
    note(`database ${database.name}: seed ${params.seed}, ${params.tenants} tenant(s), ${params.days} days, ${params.scale}`);
    const seeded = await seedBenchHistory(store, params);
    const tenant = seeded.summary.tenants[0];
    if (tenant === undefined) throw new Error('the seed has no tenant');
    const workspaceId = tenant.workspaceId;
    const added = await addSubmittedOrders(store, workspaceId, wantedOrders);
    note(`seed: ${seeded.events} events in ${seeded.seconds.toFixed(1)} s, then ${added.length} submitted orders added (setup, not measured)`);
    const replayStarted = performance.now();
    await replayProjections({ pool, eventStore: store, projections: allProjections, logger });
    await pool.query(sql.typeAlias('void')`VACUUM ANALYZE`);
    const orders = Number(await pool.oneFirst(sql.type(z.object({ count: z.bigint() }))`SELECT count(*) FROM read_models.orders WHERE tenant_id = ${workspaceId}`));
    note(`projected and VACUUM ANALYZE in ${((performance.now() - replayStarted) / 1000).toFixed(1)} s; workspace ${workspaceId}: ${orders} orders (setup, not measured)`);
    const key = (await issueBenchKey(setup, tenant, issuableScopes)).key;

    const api = await startChild(
      children,
      'api',
      ['bin/supply-api.js', 'serve', '--roles', 'api,projector'],
      { DATABASE_URL: database.connectionUri, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000' },
      undefined,
      values.port === undefined ? undefined : positiveInteger('port', values.port),
    );
    const client = httpClient(api.baseUrl, key);

    // 1. First sync, alternating so that both see the same load.
    const listWalks: Walk[] = [];
    const feedWalks: Walk[] = [];
    let cursor = '';
    for (let round = 0; round < rounds; round += 1) {
      listWalks.push(await client.walkList());
      const feed = await client.walkFeed(undefined);
      feedWalks.push(feed);
      cursor = feed.cursor;
      note(`round ${round + 1}: list ${listWalks.at(-1)?.requests} requests ${listWalks.at(-1)?.seconds.toFixed(2)} s, feed ${feed.requests} requests ${feed.seconds.toFixed(2)} s`);
    }
    const firstList = median(listWalks);
    const firstFeed = median(feedWalks);
    if (firstList.items !== orders || firstFeed.items !== orders) throw new Error(`a full read gave ${firstList.items} (list) and ${firstFeed.items} (feed) orders of ${orders}`);

    // 2. Changes, projected live by the child's projector.
    const actions = createConsoleActions({ eventStore: store, clock: systemClock });
    const changedIds = added.slice(0, changedCount);
    for (const orderId of changedIds) await actions.advanceOrder({ workspaceId, orderId });
    await waitForProjections(pool, store, allProjections, 120, { pollMs: 50, atLeast: (await store.head()).position });

    // 3. Second sync.
    const reread = await client.walkList();
    const changes = await client.walkFeed(cursor);
    const sameIds = changes.ids.length === changedIds.length && [...changes.ids].sort().join() === [...changedIds].sort().join();
    const listPageMs = (firstList.seconds / firstList.requests) * 1000;
    const feedPageMs = (firstFeed.seconds / firstFeed.requests) * 1000;
    const ratio = round(feedPageMs / listPageMs, 3);
    note(`load average ${loadavg().map((value) => value.toFixed(1)).join(' ')}`);
    const figures = {
      orders,
      changed: changedIds.length,
      firstSyncList: { requests: firstList.requests, seconds: round(firstList.seconds, 3) },
      firstSyncFeed: { requests: firstFeed.requests, seconds: round(firstFeed.seconds, 3) },
      secondSyncList: { requests: reread.requests, seconds: round(reread.seconds, 3) },
      secondSyncFeed: { requests: changes.requests, seconds: round(changes.seconds, 3), items: changes.items },
      pageMs: { list: round(listPageMs, 2), feed: round(feedPageMs, 2) },
      loadAverage: round(loadavg()[0] ?? 0, 1),
    };
    const pass = { secondSyncRequests: changes.requests <= 2, pageCostRatio: ratio <= 1.2 };
    return {
      bench: 'sync',
      figures,
      ratio,
      target: { secondSyncRequests: 2, pageCostRatio: 1.2 },
      pass,
      ...(sameIds ? {} : { failure: `the feed from the saved cursor gave ${changes.items} orders, not exactly the ${changedIds.length} changed` }),
    };
  } finally {
    for (const child of [...children]) await stopChild(children, child);
    await setup.close();
    await database.drop();
  }
}

type Walk = { requests: number; seconds: number; items: number; ids: string[]; cursor: string };

function median(walks: readonly Walk[]): Walk {
  const sorted = [...walks].sort((a, b) => a.seconds - b.seconds);
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (middle === undefined) throw new Error('no walk');
  return middle;
}

type Page = { data: { orderId: string }[]; hasMore: boolean; nextCursor?: string; syncCursor?: string };

function httpClient(baseUrl: string, key: string) {
  const get = async (path: string): Promise<Page> => {
    const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as Page;
  };
  const walk = async (first: string, next: (page: Page) => string | undefined): Promise<Walk> => {
    const started = performance.now();
    const ids: string[] = [];
    let requests = 0;
    let path: string | undefined = first;
    let last: Page | undefined;
    while (path !== undefined) {
      last = await get(path);
      requests += 1;
      for (const item of last.data) ids.push(item.orderId);
      path = next(last);
    }
    return { requests, seconds: (performance.now() - started) / 1000, items: ids.length, ids, cursor: last?.syncCursor ?? '' };
  };
  const query = (cursor: string | undefined) => (cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`);
  return {
    walkList: () => walk('/v1/orders?limit=200', (page) => (page.hasMore ? `/v1/orders?limit=200${query(page.nextCursor)}` : undefined)),
    walkFeed: (cursor: string | undefined) =>
      walk(`/v1/orders/changes?limit=200${query(cursor)}`, (page) => (page.hasMore ? `/v1/orders/changes?limit=200${query(page.syncCursor)}` : undefined)),
  };
}

/**
 * Submitted orders added until the workspace has `wanted`: copies of the first two events
 * (OrderDrafted, OrderSubmitted) of a seeded order, with new ids and numbers, appended 500 orders
 * at a time. Returns the ids added, oldest first.
 */
async function addSubmittedOrders(store: EventStore, workspaceId: string, wanted: number): Promise<string[]> {
  const names = await store.streamNames(streamNamePrefix('order', workspaceId));
  let template: readonly (EventEnvelope | undefined)[] | undefined;
  for (const name of names) {
    const events = (await store.readStream(name)).map((raw) => decodeEvent(raw));
    if (events[0]?.type === 'OrderDrafted' && events[1]?.type === 'OrderSubmitted') {
      template = events.slice(0, 2);
      break;
    }
  }
  const [drafted, submitted] = template ?? [];
  if (drafted?.type !== 'OrderDrafted' || submitted?.type !== 'OrderSubmitted') throw new Error(`workspace ${workspaceId} has no submitted order to copy`);
  const added: string[] = [];
  // As the console numbers them: the order streams of the workspace, plus one.
  let number = names.length + 1;
  while (names.length + added.length < wanted) {
    const writes: StreamWrite[] = [];
    for (let i = 0; i < 500 && names.length + added.length < wanted; i += 1) {
      const orderId = `ord_sync_${randomUUID()}`;
      const envelope = { tenantId: workspaceId, occurredAt: submitted.occurredAt };
      writes.push({
        streamName: streams.order(workspaceId, orderId),
        expectedRevision: 'no_stream',
        events: [
          newEvent('OrderDrafted', { ...drafted.data, orderId, number }, { ...envelope, eventId: randomUUID() }),
          newEvent('OrderSubmitted', { ...submitted.data, orderId }, { ...envelope, eventId: randomUUID() }),
        ],
      });
      added.push(orderId);
      number += 1;
    }
    await store.appendMany(writes);
  }
  return added;
}
