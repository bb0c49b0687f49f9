import { setTimeout as sleep } from 'node:timers/promises';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { currentVersionOf, isKnownEventType } from '../events/index.js';
import { compareLogPositions, logStart, type EventStore, type LogPosition, type RecordedEvent } from '../eventStore/eventStore.js';
import { systemClock, type Clock } from '../platform/clock.js';
import { sql } from '../platform/sql.js';
import { loadGenerations, type Generation } from './generations.js';
import { formatPosition } from './logPositions.js';
import type { Projection } from './projection.js';
import { heldProjectionLocks } from './projectionLocks.js';

/**
 * live: caught up with the head. catching_up: behind it. outdated: the active generation was
 * built by another definition (replay it). not_started: no generation yet (no projector has run).
 */
export type ProjectionState = 'live' | 'catching_up' | 'outdated' | 'not_started';

export type DeadLetterSummary = {
  readonly position: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly tenantId: string;
  readonly error: string;
  readonly recordedAt: string;
};

export type ProjectionStatus = {
  readonly projection: string;
  readonly state: ProjectionState;
  readonly generation?: number;
  readonly definitionVersion: number;
  readonly checkpoint: string;
  readonly lagEvents: number;
  readonly lagSeconds: number;
  readonly eventsApplied: number;
  readonly deadLetters: number;
  readonly recentDeadLetters: readonly DeadLetterSummary[];
  /**
   * A generation a replay is building (`running`: a replay holds the projection's replay lock now)
   * or left building when it was killed (`running` false: the next `projections replay` resumes it).
   */
  readonly building?: { readonly generation: number; readonly lagEvents: number; readonly running: boolean };
  readonly lastFailure?: { readonly generation: number; readonly error: string };
  /**
   * The projection holds: the next event after its checkpoint is one it handles, of a schema
   * version newer than this release reads. Live projectors of this release stop there (it is not
   * dead-lettered); a release that reads the version picks it up (docs/operators.md).
   */
  readonly held?: { readonly position: string; readonly eventId: string; readonly eventType: string; readonly schemaVersion: number; readonly knownVersion: number };
};

export type ProjectionsReport = {
  readonly head: { readonly position: string; readonly events: number; readonly lastRecordedAt?: string };
  readonly projections: readonly ProjectionStatus[];
};

const deadLetterCount = z.object({ projection: z.string(), generation: z.number().int(), count: z.bigint() });
const deadLetterRow = z.object({
  projection: z.string(),
  positionTx: z.bigint(),
  positionSeq: z.bigint(),
  eventId: z.string(),
  eventType: z.string(),
  tenantId: z.string(),
  error: z.string(),
  recordedAt: z.string(),
});

/**
 * Checkpoint, head, lag in events and in seconds, state and dead letters of every projection.
 * The lag in seconds is the age, by `clock`, of the oldest event the projection has not applied
 * (when the log recorded it; 0 when caught up): it keeps growing while no projector runs, whoever
 * asks. The log's recordedAt, not the event's occurredAt: an event can be recorded long after it
 * occurred (a history imported, a device that was offline), and that is no delay of the projector.
 */
export async function projectionsReport(
  db: CommonQueryMethods,
  eventStore: EventStore,
  projections: readonly Projection[],
  clock: Clock = systemClock,
): Promise<ProjectionsReport> {
  const [head, generations, counts] = await Promise.all([
    eventStore.head(),
    loadGenerations(db, ['active', 'building', 'failed']),
    db.any(sql.type(deadLetterCount)`
      SELECT d.projection, d.generation, count(*) AS count
      FROM projection_dead_letters AS d
      JOIN projection_generations AS g ON g.projection = d.projection AND g.generation = d.generation AND g.state = 'active'
      GROUP BY d.projection, d.generation
    `),
  ]);
  // A generation being built: is a replay building it now, or did one that was killed leave it?
  const buildingNames = generations.filter((g) => g.state === 'building').map((g) => g.projection);
  const replaying = buildingNames.length === 0 ? new Set<string>() : await heldProjectionLocks(db, 'replay', buildingNames);
  // The oldest event not applied: one read of the log per checkpoint that lags (projections share them).
  const now = clock.now().getTime();
  const oldestUnapplied = new Map<string, Promise<RecordedEvent | undefined>>();
  const nextAfter = (checkpoint: LogPosition): Promise<RecordedEvent | undefined> => {
    const key = formatPosition(checkpoint);
    let next = oldestUnapplied.get(key);
    if (next === undefined) {
      next = eventStore.readAll(checkpoint, 1).then((read) => read.events[0]);
      oldestUnapplied.set(key, next);
    }
    return next;
  };
  const lagSecondsFrom = async (checkpoint: LogPosition, lagEvents: number): Promise<number> => {
    if (lagEvents <= 0) return 0;
    const at = (await nextAfter(checkpoint))?.recordedAt;
    return at === undefined ? 0 : Math.max(0, (now - Date.parse(at)) / 1000);
  };
  const heldAt = async (projection: Projection, active: Generation | undefined, lagEvents: number): Promise<ProjectionStatus['held']> => {
    if (active === undefined || lagEvents <= 0) return undefined;
    const next = await nextAfter(active.checkpoint);
    if (next === undefined || !isKnownEventType(next.type) || !projection.handles.includes(next.type)) return undefined;
    const knownVersion = currentVersionOf(next.type);
    if (next.schemaVersion <= knownVersion) return undefined;
    return { position: formatPosition(next.position), eventId: next.eventId, eventType: next.type, schemaVersion: next.schemaVersion, knownVersion };
  };
  const statuses: ProjectionStatus[] = [];
  for (const projection of projections) {
    const own = generations.filter((g) => g.projection === projection.name);
    const active = own.find((g) => g.state === 'active');
    const building = own.find((g) => g.state === 'building');
    const failed = own.filter((g) => g.state === 'failed').at(-1);
    const deadLetters = Number(counts.find((c) => c.projection === projection.name)?.count ?? 0n);
    const recent =
      deadLetters === 0 || !active
        ? []
        : await db.any(sql.type(deadLetterRow)`
            SELECT projection, position_tx AS "positionTx", position_seq AS "positionSeq", event_id AS "eventId",
              event_type AS "eventType", tenant_id AS "tenantId", error, recorded_at AS "recordedAt"
            FROM projection_dead_letters
            WHERE projection = ${projection.name} AND generation = ${active.generation}
            ORDER BY position_tx DESC, position_seq DESC
            LIMIT 5
          `);
    const lagEvents = active ? Number(head.eventCount - active.eventsSeen) : Number(head.eventCount);
    const held = await heldAt(projection, active, lagEvents);
    statuses.push({
      projection: projection.name,
      state: stateOf(projection, active, lagEvents),
      ...(active ? { generation: active.generation } : {}),
      definitionVersion: active?.definitionVersion ?? projection.version,
      checkpoint: formatPosition(active?.checkpoint ?? logStart),
      lagEvents,
      lagSeconds: await lagSecondsFrom(active?.checkpoint ?? logStart, lagEvents),
      eventsApplied: Number(active?.eventsApplied ?? 0n),
      deadLetters,
      recentDeadLetters: recent.map((d) => ({
        position: formatPosition({ tx: d.positionTx, seq: d.positionSeq }),
        eventId: d.eventId,
        eventType: d.eventType,
        tenantId: d.tenantId,
        error: d.error,
        recordedAt: d.recordedAt,
      })),
      ...(building
        ? {
            building: {
              generation: building.generation,
              lagEvents: Number(head.eventCount - building.eventsSeen),
              running: replaying.has(projection.name),
            },
          }
        : {}),
      ...(failed && (!active || failed.generation > active.generation) && failed.error !== undefined
        ? { lastFailure: { generation: failed.generation, error: failed.error } }
        : {}),
      ...(held === undefined ? {} : { held }),
    });
  }
  return {
    head: {
      position: formatPosition(head.position),
      events: Number(head.eventCount),
      ...(head.lastRecordedAt ? { lastRecordedAt: head.lastRecordedAt } : {}),
    },
    projections: statuses,
  };
}

async function reachedPosition(db: CommonQueryMethods, projections: readonly Projection[], position: LogPosition | undefined): Promise<boolean> {
  if (position === undefined) return true;
  const active = await loadGenerations(db, ['active']);
  return projections.every((projection) => {
    const generation = active.find((g) => g.projection === projection.name);
    return generation !== undefined && compareLogPositions(generation.checkpoint, position) >= 0;
  });
}

function stateOf(projection: Projection, active: Generation | undefined, lagEvents: number): ProjectionState {
  if (!active) return 'not_started';
  if (active.definitionVersion !== projection.version) return 'outdated';
  return lagEvents > 0 ? 'catching_up' : 'live';
}

export class ProjectionsWaitTimeout extends Error {
  constructor(
    readonly report: ProjectionsReport,
    timeoutSeconds: number,
  ) {
    const behind = report.projections.filter((p) => p.state !== 'live').map((p) => `${p.projection} (${p.state}, ${p.lagEvents} events behind)`);
    super(`projections did not reach the head of the log within ${timeoutSeconds} s: ${behind.join(', ')}`);
    this.name = 'ProjectionsWaitTimeout';
  }
}

/**
 * Resolves once every projection is live at the head (and, with `atLeast`, has passed that
 * position: the position an append returned, which the visible head may not show yet while an
 * older transaction is still open); throws ProjectionsWaitTimeout otherwise.
 */
export async function waitForProjections(
  db: CommonQueryMethods,
  eventStore: EventStore,
  projections: readonly Projection[],
  timeoutSeconds: number,
  options: { readonly pollMs?: number; readonly atLeast?: LogPosition; readonly onReport?: (report: ProjectionsReport) => void } = {},
): Promise<ProjectionsReport> {
  const pollMs = options.pollMs ?? 200;
  const deadline = performance.now() + timeoutSeconds * 1000;
  for (;;) {
    const report = await projectionsReport(db, eventStore, projections);
    options.onReport?.(report);
    if (report.projections.every((p) => p.state === 'live') && (await reachedPosition(db, projections, options.atLeast))) return report;
    if (performance.now() >= deadline) throw new ProjectionsWaitTimeout(report, timeoutSeconds);
    await sleep(pollMs);
  }
}
