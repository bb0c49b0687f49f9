import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { allProjections } from '../projections/index.js';
import { createProgressBar } from '../src/cli/progressBar.js';
import { randomIds } from '../src/console/consoleIds.js';
import { historyDefaults, startOfUtcDay } from '../src/console/history/historyParams.js';
import type { SeedSummary } from '../src/console/seedSummary.js';
import { createTenantDirectory, memberIn } from '../src/console/tenantDirectory.js';
import { compareLogPositions, type EventStore, type LogPosition, type StreamWrite } from '../src/eventStore/eventStore.js';
import { createPostgresEventStore } from '../src/eventStore/postgresEventStore.js';
import { newEvent, type EventEnvelope } from '../src/events/index.js';
import { createDatabasePool } from '../src/platform/db.js';
import { createLogger } from '../src/platform/logger.js';
import { migrate } from '../src/platform/migrate.js';
import { sql } from '../src/platform/sql.js';
import { loadGenerations } from '../src/projecting/generations.js';
import { minimumCheckpoint } from '../src/projecting/logPositions.js';
import { startProjector, type Projector } from '../src/projecting/projector.js';
import { projectionsReport, waitForProjections } from '../src/projecting/status.js';
import { createBenchDatabase, note, oneOf, percentile, positiveInteger, round, seedBenchHistory, utcDay, historyParamsOf } from './benchSupport.js';
import type { BenchResult } from './run.js';

/**
 * Projection lag under a steady write load, on real Postgres in a database of its own:
 *
 *   npm run bench -- lag [--rate 1000] [--seconds 30] [--scale small] [--tenants 2] [--days 90]
 *                        [--seed 7] [--as-of YYYY-MM-DD] [--poll-ms 5] [--wake notify|in-process]
 *
 * Setup: migrate, seed, start a projector over `allProjections` and wait until every projection is
 * live at the head. Then, every tick (10 ms at 1000 events/s), one appendMany of the events due by
 * then: reserve immediately followed by release of the same quantity on registered, active boxes
 * with free stock (net zero, so every box stays valid however long the bench runs), and
 * ClinicRenamed on existing clinics; each with the exact expected revision of its stream.
 *
 * Lag of an event = from the moment its append resolved to the moment a reader on a separate
 * connection sees every projection's committed checkpoint at or past it (rows and checkpoint commit
 * in one transaction, so the rows are visible then). The reader polls projection_generations every
 * `--poll-ms`; the visibility time taken is when the poll's answer arrived, so the figure is an
 * upper bound (by at most one poll interval plus a round trip). The projector's observer hook is not
 * used: it reports counts, not log positions, and is not called for batches none of whose events a
 * projection handles.
 *
 * By default (--wake notify) the appender uses an event store (and pool) of its own, as the console
 * does in another process: the projector learns of new events by Postgres NOTIFY. With --wake
 * in-process the appender shares the projector's store, whose appends wake it directly.
 *
 * The log horizon the projector reads below is cluster-wide, so writing transactions of OTHER
 * databases on the same server delay it too: they are sampled every 50 ms (pg_stat_activity) and
 * reported beside the lag (foreignWriteTx*, and the lag of the events no such transaction
 * overlapped) so that a run on a shared server can be judged. Also reported: the 1-minute load
 * average, append latency, poll round trip, dead letters (expected 0).
 */
export async function run(args: readonly string[]): Promise<BenchResult> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      rate: { type: 'string', default: '1000' },
      seconds: { type: 'string', default: '30' },
      scale: { type: 'string', default: 'small' },
      tenants: { type: 'string', default: String(historyDefaults.tenants) },
      days: { type: 'string', default: String(historyDefaults.days) },
      seed: { type: 'string', default: '7' },
      'as-of': { type: 'string' },
      'poll-ms': { type: 'string', default: '5' },
      wake: { type: 'string', default: 'notify' },
    },
  });
  const rate = positiveInteger('rate', values.rate);
  const seconds = positiveInteger('seconds', values.seconds);
  const pollMs = positiveInteger('poll-ms', values['poll-ms']);
  const wake = oneOf('wake', values.wake, ['notify', 'in-process'] as const);
  // The history ends today (as `supply-api seed` does): the appended events happen after it.
  const asOf = values['as-of'] === undefined ? startOfUtcDay(new Date()).toISOString() : utcDay('as-of', values['as-of']);
  const params = historyParamsOf(values, { asOf });
  const logger = createLogger(process.env.LOG_LEVEL ?? 'warn');
  if (allProjections.length === 0) throw new Error('no projection is registered in projections/index.ts');

  const database = await createBenchDatabase();
  try {
    const { connectionUri } = database;
    // The projector's side, sized as `serve` opens it; the appender's; the reader that watches.
    const projectorPool = await createDatabasePool(connectionUri, 10);
    const writerPool = await createDatabasePool(connectionUri, 2);
    const readerPool = await createDatabasePool(connectionUri, 1);
    const activityPool = await createDatabasePool(connectionUri, 1);
    const projectorStore = createPostgresEventStore({ pool: projectorPool, kind: 'postgres', logger, connectionUri });
    // notify: the appender has a store of its own (another process, as the console); in-process: it
    // shares the projector's store (an append in the same process wakes the projector directly).
    const writerStore = wake === 'notify' ? createPostgresEventStore({ pool: writerPool, kind: 'postgres', logger, connectionUri }) : projectorStore;
    let projector: Projector | undefined;
    try {
      await migrate(projectorPool, logger);
      note(`database ${database.name}: seed ${params.seed}, ${params.tenants} tenants, ${params.scale}; projections ${allProjections.map((p) => p.name).join(', ')}`);
      const seeded = await seedBenchHistory(writerStore, params);
      note(`seed: ${seeded.events} events in ${seeded.seconds.toFixed(1)} s (setup)`);

      projector = startProjector({ pool: projectorPool, eventStore: projectorStore, projections: allProjections, logger });
      const caughtUp = performance.now();
      await waitForProjections(readerPool, projectorStore, allProjections, 600, { pollMs: 50 });
      note(`projections live at the head after ${((performance.now() - caughtUp) / 1000).toFixed(1)} s`);

      const workload = await prepareWorkload(writerStore, seeded.summary, asOf.slice(0, 10));
      note(`workload: reserve/release on ${workload.boxes} boxes, ClinicRenamed on ${workload.clinics} clinics; ${rate} events/s for ${seconds} s`);

      const watcher = watchVisibility(readerPool, pollMs);
      const foreign = watchForeignWrites(activityPool);
      let load: LoadResult;
      let foreignWrites: ForeignWrites;
      try {
        load = await appendAtRate(writerStore, workload, rate, seconds, watcher);
        note(`appended ${load.events} events in ${load.seconds.toFixed(2)} s = ${Math.round(load.events / load.seconds)} events/s`);
        await watcher.drained(60_000);
      } finally {
        await watcher.stop();
        foreignWrites = await foreign.stop();
      }
      if (foreignWrites.heldPct > 0) {
        note(`note: writing transactions of other databases held the log horizon for ${foreignWrites.heldPct}% of the run (longest ${foreignWrites.maxMs} ms)`);
      }

      const report = await projectionsReport(readerPool, projectorStore, allProjections);
      const deadLetters = report.projections.reduce((sum, p) => sum + p.deadLetters, 0);
      if (deadLetters > 0) note(`WARNING: ${deadLetters} dead letter(s): ${JSON.stringify(report.projections.flatMap((p) => p.recentDeadLetters))}`);

      const settled = watcher.settled();
      const all = summarize(settled);
      const undisturbed = summarize(settled.filter((entry) => !overlapsAny(entry, foreignWrites.intervals)));
      const appendMs = Float64Array.from(load.appendMs).sort();
      const pollMsSorted = watcher.pollRoundTrips();
      const figures = {
        lagP50Ms: all.p50,
        lagP95Ms: all.p95,
        lagP99Ms: all.p99,
        lagMaxMs: all.max,
        lagMeanMs: all.mean,
        events: all.events,
        targetRate: rate,
        achievedRate: Math.round(load.events / load.seconds),
        seconds: round(load.seconds, 2),
        appends: load.appendMs.length,
        appendP50Ms: round(percentile(appendMs, 0.5), 1),
        appendP99Ms: round(percentile(appendMs, 0.99), 1),
        pollRoundTripP50Ms: round(percentile(pollMsSorted, 0.5), 1),
        pollIntervalMs: pollMs,
        deadLetters,
        projections: allProjections.length,
        seedEvents: seeded.events,
        // The machine's 1-minute load average at the end: other work on the 2 cores shows in the lag.
        loadAvg1m: round(loadavg()[0] ?? 0, 2),
        // Share of 50 ms samples in which another database had a writing transaction open >= 50 ms,
        // and the longest seen: both hold back the cluster-wide horizon the projector reads below.
        foreignWriteTxHeldPct: foreignWrites.heldPct,
        foreignWriteTxMaxMs: foreignWrites.maxMs,
        // The same lag over the events whose wait overlapped no such transaction (context, not the result).
        undisturbedEvents: undisturbed.events,
        undisturbedLagP99Ms: undisturbed.p99,
        undisturbedLagMaxMs: undisturbed.max,
      };
      note(`worst lag (ms) of the appends of each second (* = another database held the horizon): ${worstBySecond(settled, load.startedAt, foreignWrites.intervals)}`);
      note(`lag ms: p50 ${figures.lagP50Ms}, p95 ${figures.lagP95Ms}, p99 ${figures.lagP99Ms}, max ${figures.lagMaxMs}`);
      return { bench: 'lag', figures, target: { lagP99Ms: 200 } };
    } finally {
      await projector?.stop();
      if (writerStore !== projectorStore) await writerStore.close();
      await projectorStore.close();
      await Promise.all([projectorPool.end(), writerPool.end(), readerPool.end(), activityPool.end()]);
    }
  } finally {
    await database.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// The workload: what a console produces, on the seeded tenants' own streams.

type BoxTarget = {
  readonly tenantId: string;
  readonly boxId: string;
  readonly catalogItemId: string;
  readonly streamName: string;
  readonly free: number;
  readonly actorId: string;
  revision: bigint;
};

type ClinicTarget = {
  readonly tenantId: string;
  readonly clinicId: string;
  readonly streamName: string;
  readonly name: string;
  renamed: boolean;
  revision: bigint;
};

type Workload = {
  readonly boxes: number;
  readonly clinics: number;
  /** Stream writes holding exactly `events` events (distinct streams while there are enough). */
  next(events: number): StreamWrite[];
};

async function prepareWorkload(eventStore: EventStore, summary: SeedSummary, today: string): Promise<Workload> {
  const perTenantBoxes: BoxTarget[][] = [];
  const perTenantClinics: ClinicTarget[][] = [];
  for (const { workspaceId: tenantId } of summary.tenants) {
    const directory = createTenantDirectory(eventStore, tenantId);
    const [members, items, warehouses, boxes, clinics] = await Promise.all([
      directory.members(),
      directory.items(),
      directory.warehouses(),
      directory.boxes(),
      directory.clinics(),
    ]);
    const actorId = memberIn(members, 'warehouse')?.memberId;
    if (actorId === undefined) continue;
    // What the console's allocation would reserve from: active boxes with free stock, not expired,
    // in an active warehouse, of an active item (not high value: no witness needed).
    const plainItems = new Set(items.filter((i) => i.view.status === 'active' && !i.view.highValue).map((i) => i.view.itemId));
    const activeWarehouses = new Set(warehouses.filter((w) => w.view.status === 'active').map((w) => w.view.warehouseId));
    perTenantBoxes.push(
      boxes.flatMap(({ view, stream }) =>
        view.status === 'active' &&
        view.onHand - view.reserved > 0 &&
        (view.expiresOn === undefined || view.expiresOn > today) &&
        plainItems.has(view.catalogItemId) &&
        activeWarehouses.has(view.warehouseId) &&
        typeof stream.revision === 'bigint'
          ? [
              {
                tenantId,
                boxId: view.boxId,
                catalogItemId: view.catalogItemId,
                streamName: stream.streamName,
                free: view.onHand - view.reserved,
                actorId,
                revision: stream.revision,
              },
            ]
          : [],
      ),
    );
    perTenantClinics.push(
      clinics.flatMap(({ view, stream }) =>
        typeof stream.revision === 'bigint'
          ? [{ tenantId, clinicId: view.clinicId, streamName: stream.streamName, name: view.name, renamed: false, revision: stream.revision }]
          : [],
      ),
    );
  }
  const boxes = interleave(perTenantBoxes);
  const clinics = interleave(perTenantClinics);
  if (boxes.length === 0 || clinics.length === 0) throw new Error(`the seed left ${boxes.length} boxes with free stock and ${clinics.length} clinics to work on`);

  let nextBox = 0;
  let nextClinic = 0;
  let serial = 0;
  return {
    boxes: boxes.length,
    clinics: clinics.length,
    next: (events) => {
      const occurredAt = new Date().toISOString();
      const pairs = Math.floor(events * 0.4);
      const renames = events - 2 * pairs;
      const writes: StreamWrite[] = [];
      for (let i = 0; i < pairs; i += 1) {
        const box = boxes[nextBox % boxes.length];
        nextBox += 1;
        if (box === undefined) continue;
        serial += 1;
        const quantity = 1 + (serial % Math.min(box.free, 3));
        const correlationId = `lagbench-${serial}`;
        const envelope = (): { eventId: string; tenantId: string; occurredAt: string } => ({ eventId: randomUUID(), tenantId: box.tenantId, occurredAt });
        const movement = { boxId: box.boxId, catalogItemId: box.catalogItemId, quantityDelta: 0, actorId: box.actorId, correlationId, occurredAt };
        const reserve: EventEnvelope = newEvent(
          'StockMovementRecorded',
          { ...movement, movementId: randomIds.id('mov'), type: 'reserve', reservedDelta: quantity, idempotencyKey: `${correlationId}:reserve` },
          envelope(),
        );
        const release: EventEnvelope = newEvent(
          'StockMovementRecorded',
          { ...movement, movementId: randomIds.id('mov'), type: 'release', reservedDelta: -quantity, reasonCode: 'not_used' },
          envelope(),
        );
        writes.push({ streamName: box.streamName, expectedRevision: box.revision, events: [reserve, release] });
        box.revision += 2n;
      }
      for (let i = 0; i < renames; i += 1) {
        const clinic = clinics[nextClinic % clinics.length];
        nextClinic += 1;
        if (clinic === undefined) continue;
        clinic.renamed = !clinic.renamed;
        const renamed: EventEnvelope = newEvent(
          'ClinicRenamed',
          { clinicId: clinic.clinicId, name: clinic.renamed ? `${clinic.name} (Standort 2)` : clinic.name },
          { eventId: randomUUID(), tenantId: clinic.tenantId, occurredAt },
        );
        writes.push({ streamName: clinic.streamName, expectedRevision: clinic.revision, events: [renamed] });
        clinic.revision += 1n;
      }
      return writes;
    },
  };
}

/** a1 b1 a2 b2 b3…: consecutive picks come from different tenants. */
function interleave<T>(lists: readonly (readonly T[])[]): T[] {
  const out: T[] = [];
  const longest = Math.max(0, ...lists.map((list) => list.length));
  for (let index = 0; index < longest; index += 1) {
    for (const list of lists) {
      const item = list[index];
      if (item !== undefined) out.push(item);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Load and measurement.

type LoadResult = { readonly events: number; readonly seconds: number; readonly appendMs: readonly number[]; readonly startedAt: number };

/**
 * Tick k (every max(10 ms, one event's time)) appends what brings the total to the target for the
 * end of that tick. A late tick appends its backlog (at most ten ticks' worth) at once; the
 * achieved rate says whether the appender kept up. One appender, so positions only grow.
 */
async function appendAtRate(eventStore: EventStore, workload: Workload, rate: number, seconds: number, watcher: VisibilityWatcher): Promise<LoadResult> {
  const tickMs = Math.max(10, 1000 / rate);
  const ticks = Math.max(1, Math.round((seconds * 1000) / tickMs));
  const perTick = Math.max(1, Math.round((rate * tickMs) / 1000));
  const bar = createProgressBar('append', 'events', true);
  const appendMs: number[] = [];
  let events = 0;
  const started = performance.now();
  bar.start(Math.round((rate * ticks * tickMs) / 1000));
  try {
    for (let tick = 0; tick < ticks; tick += 1) {
      const wait = started + tick * tickMs - performance.now();
      if (wait > 0) await sleep(wait);
      const due = Math.min(Math.round((rate * (tick + 1) * tickMs) / 1000) - events, 10 * perTick);
      if (due <= 0) continue;
      const writes = workload.next(due);
      const sent = performance.now();
      const results = await eventStore.appendMany(writes);
      const resolved = performance.now();
      appendMs.push(resolved - sent);
      writes.forEach((write, index) => {
        const result = results[index];
        if (result === undefined) throw new Error('appendMany returned fewer results than writes');
        // A write's result is the position of its last event: each event counts as visible once
        // the checkpoints pass that (a conservative bound for the first of a pair).
        watcher.appended(result.position, write.events.length, resolved);
      });
      events += due;
      bar.update(events);
    }
    return { events, seconds: (performance.now() - started) / 1000, appendMs, startedAt: started };
  } finally {
    bar.stop();
  }
}

/** An append and when it was seen visible (performance.now() ms); its events share both times. */
type Settled = { readonly resolvedAt: number; readonly seenAt: number; readonly events: number };

type VisibilityWatcher = {
  appended(position: LogPosition, events: number, resolvedAt: number): void;
  /** Resolves once every appended event has been seen visible; throws after `timeoutMs`. */
  drained(timeoutMs: number): Promise<void>;
  /** Stops polling (a poll failure is reported by drained). */
  stop(): Promise<void>;
  /** The appends seen visible, in append order. */
  settled(): readonly Settled[];
  pollRoundTrips(): Float64Array;
};

/**
 * Polls the active generations' checkpoints from its own connection every `pollMs` (measured from
 * the start of one poll to the start of the next) and settles, in append order, every appended
 * event at or before the lowest checkpoint of all projections.
 */
function watchVisibility(pool: DatabasePool, pollMs: number): VisibilityWatcher {
  const names = allProjections.map((p) => p.name);
  const pending: { position: LogPosition; events: number; resolvedAt: number }[] = [];
  let first = 0;
  const settled: Settled[] = [];
  const roundTrips: number[] = [];
  const stopping = new AbortController();
  let failure: unknown;

  const poll = async (): Promise<void> => {
    while (!stopping.signal.aborted) {
      const sent = performance.now();
      const generations = await loadGenerations(pool, ['active']);
      const seenAt = performance.now();
      roundTrips.push(seenAt - sent);
      const checkpoints = names.map((name) => generations.find((g) => g.projection === name)?.checkpoint);
      if (checkpoints.every((c): c is LogPosition => c !== undefined)) {
        const through = minimumCheckpoint(checkpoints);
        for (let entry = pending[first]; entry !== undefined && compareLogPositions(entry.position, through) <= 0; entry = pending[first]) {
          settled.push({ resolvedAt: entry.resolvedAt, seenAt, events: entry.events });
          first += 1;
        }
      }
      const wait = sent + pollMs - performance.now();
      await sleep(Math.max(0, wait), undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  };
  const polling = poll().catch((error: unknown) => {
    failure = error;
  });

  return {
    appended: (position, events, resolvedAt) => {
      pending.push({ position, events, resolvedAt });
    },
    drained: async (timeoutMs) => {
      const deadline = performance.now() + timeoutMs;
      while (first < pending.length) {
        if (failure !== undefined) throw failure;
        if (performance.now() > deadline) throw new Error(`${pending.length - first} appends still not visible after ${timeoutMs} ms`);
        await sleep(20);
      }
    },
    stop: async () => {
      stopping.abort();
      await polling;
    },
    settled: () => settled,
    pollRoundTrips: () => Float64Array.from(roundTrips).sort(),
  };
}

const foreignWriteAge = z.object({ ms: z.number().nullable() });

/** When a writing transaction of another database was seen open (performance.now() ms). */
type HeldInterval = { readonly from: number; readonly to: number };

type ForeignWrites = { readonly maxMs: number; readonly heldPct: number; readonly intervals: readonly HeldInterval[] };

/**
 * The log horizon (pg_snapshot_xmin) is cluster-wide: a transaction that writes in ANY database of
 * this Postgres holds back what the projector may read here. This samples, every 50 ms from its own
 * connection, the oldest such transaction of the other databases (open for 50 ms or more), so that
 * lag caused by other work on a shared server can be told apart.
 */
function watchForeignWrites(pool: DatabasePool): { stop(): Promise<ForeignWrites> } {
  const stopping = new AbortController();
  const intervals: HeldInterval[] = [];
  let samples = 0;
  let held = 0;
  let maxMs = 0;
  const sampling = (async () => {
    while (!stopping.signal.aborted) {
      const ms = await pool.oneFirst(sql.type(foreignWriteAge)`
        SELECT (extract(epoch FROM max(clock_timestamp() - xact_start)) * 1000)::float8 AS ms
        FROM pg_stat_activity
        WHERE backend_xid IS NOT NULL AND datname IS DISTINCT FROM current_database()
      `);
      const seenAt = performance.now();
      samples += 1;
      if (ms !== null && ms >= 50) {
        held += 1;
        intervals.push({ from: seenAt - ms, to: seenAt });
      }
      maxMs = Math.max(maxMs, ms ?? 0);
      await sleep(50, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  })().catch(() => undefined);
  return {
    stop: async () => {
      stopping.abort();
      await sampling;
      return { maxMs: Math.round(maxMs), heldPct: samples === 0 ? 0 : round((100 * held) / samples, 1), intervals };
    },
  };
}

type LagSummary = { p50: number; p95: number; p99: number; max: number; mean: number; events: number };

function summarize(entries: readonly Settled[]): LagSummary {
  const events = entries.reduce((sum, entry) => sum + entry.events, 0);
  const lags = new Float64Array(events);
  let index = 0;
  for (const entry of entries) lags.fill(entry.seenAt - entry.resolvedAt, index, (index += entry.events));
  lags.sort();
  const total = lags.reduce((sum, lag) => sum + lag, 0);
  return {
    p50: round(percentile(lags, 0.5), 1),
    p95: round(percentile(lags, 0.95), 1),
    p99: round(percentile(lags, 0.99), 1),
    max: round(lags.at(-1) ?? 0, 1),
    mean: round(total / Math.max(1, events), 1),
    events,
  };
}

function overlapsAny(entry: Settled, intervals: readonly HeldInterval[]): boolean {
  return intervals.some((held) => held.from < entry.seenAt && held.to > entry.resolvedAt);
}

/** The worst lag of the appends that resolved in each second of the run; `*` where another database held the horizon. */
function worstBySecond(entries: readonly Settled[], since: number, intervals: readonly HeldInterval[]): string {
  const worst: number[] = [];
  const disturbed: boolean[] = [];
  for (const entry of entries) {
    const second = Math.max(0, Math.floor((entry.resolvedAt - since) / 1000));
    worst[second] = Math.max(worst[second] ?? 0, entry.seenAt - entry.resolvedAt);
    if (overlapsAny(entry, intervals)) disturbed[second] = true;
  }
  return Array.from(worst, (lag, second) => `${Math.round(lag ?? 0)}${disturbed[second] === true ? '*' : ''}`).join(' ');
}
