import { setTimeout as sleep } from 'node:timers/promises';
import type { CommonQueryMethods, DatabasePool, DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import type { LogPosition } from '../eventStore/eventStore.js';
import type { Logger } from '../platform/logger.js';
import { sql } from '../platform/sql.js';
import type { Projection, TableResolver } from './projection.js';
import { sqlState } from './transientErrors.js';

/**
 * A projection's tables exist once per generation, each generation in a schema of its own; the
 * views of schema `read_models` point at the active one. Every function here owns SQL of the
 * `projection_generations` bookkeeping table.
 */
export type GenerationState = 'building' | 'active' | 'retired' | 'failed';

export type Generation = {
  readonly projection: string;
  readonly generation: number;
  readonly definitionVersion: number;
  readonly schemaName: string;
  readonly state: GenerationState;
  readonly checkpoint: LogPosition;
  readonly eventsSeen: bigint;
  readonly eventsApplied: bigint;
  readonly checkpointRecordedAt: string | undefined;
  readonly error: string | undefined;
};

export const readModelSchema = 'read_models';

const generationRow = z
  .object({
    projection: z.string(),
    generation: z.number().int(),
    definitionVersion: z.number().int(),
    schemaName: z.string(),
    state: z.enum(['building', 'active', 'retired', 'failed']),
    checkpointTx: z.bigint(),
    checkpointSeq: z.bigint(),
    eventsSeen: z.bigint(),
    eventsApplied: z.bigint(),
    checkpointRecordedAt: z.string().nullable(),
    error: z.string().nullable(),
  })
  .transform(
    (row): Generation => ({
      projection: row.projection,
      generation: row.generation,
      definitionVersion: row.definitionVersion,
      schemaName: row.schemaName,
      state: row.state,
      checkpoint: { tx: row.checkpointTx, seq: row.checkpointSeq },
      eventsSeen: row.eventsSeen,
      eventsApplied: row.eventsApplied,
      checkpointRecordedAt: row.checkpointRecordedAt ?? undefined,
      error: row.error ?? undefined,
    }),
  );

const generationColumns = sql.fragment`
  projection, generation, definition_version AS "definitionVersion", schema_name AS "schemaName", state,
  checkpoint_tx AS "checkpointTx", checkpoint_seq AS "checkpointSeq", events_seen AS "eventsSeen",
  events_applied AS "eventsApplied", checkpoint_recorded_at AS "checkpointRecordedAt", error
`;

export class CheckpointConflictError extends Error {
  constructor(detail: string) {
    super(`checkpoint moved under this projector: ${detail}`);
    this.name = 'CheckpointConflictError';
  }
}

export function tableResolver(schemaName: string): TableResolver {
  return (name) => sql.identifier([schemaName, name]);
}

export async function loadGenerations(db: CommonQueryMethods, states: readonly GenerationState[]): Promise<readonly Generation[]> {
  return db.any(sql.type(generationRow)`
    SELECT ${generationColumns} FROM projection_generations
    WHERE state = ANY(${sql.array([...states], 'text')})
    ORDER BY projection, generation
  `);
}

/** Locks the active generation rows of these projections (a switch waits for running batches). */
export async function lockActiveGenerations(db: CommonQueryMethods, projections: readonly string[]): Promise<readonly Generation[]> {
  return db.any(sql.type(generationRow)`
    SELECT ${generationColumns} FROM projection_generations
    WHERE state = 'active' AND projection = ANY(${sql.array([...projections].sort(), 'text')})
    ORDER BY projection
    FOR UPDATE
  `);
}

/** Creates the next generation of a projection: its schema, its tables and its row. */
export async function createGeneration(db: CommonQueryMethods, projection: Projection, state: 'building' | 'active'): Promise<Generation> {
  const next = await db.oneFirst(sql.type(z.object({ next: z.number().int() }))`
    SELECT coalesce(max(generation), 0) + 1 AS next FROM projection_generations WHERE projection = ${projection.name}
  `);
  const schemaName = `rm_${projection.name}_g${next}`;
  await db.query(sql.typeAlias('void')`DROP SCHEMA IF EXISTS ${sql.identifier([schemaName])} CASCADE`);
  await db.query(sql.typeAlias('void')`CREATE SCHEMA ${sql.identifier([schemaName])}`);
  const table = tableResolver(schemaName);
  for (const definition of projection.tables) {
    for (const statement of definition.create(table)) {
      await db.query(statement);
    }
  }
  if (state === 'active') await createDeferredIndexes(db, projection, schemaName);
  return db.one(sql.type(generationRow)`
    INSERT INTO projection_generations (projection, generation, definition_version, schema_name, state)
    VALUES (${projection.name}, ${next}, ${projection.version}, ${schemaName}, ${state})
    RETURNING ${generationColumns}
  `);
}

/** The indexes a replay leaves out of its bulk load (TableDefinition.deferredIndexes). */
export async function createDeferredIndexes(db: CommonQueryMethods, projection: Projection, schemaName: string): Promise<void> {
  for (const statement of deferredIndexStatements(projection, schemaName)) {
    await db.query(statement);
  }
}

/** The statements of createDeferredIndexes, for a replay that runs them side by side. */
export function deferredIndexStatements(projection: Projection, schemaName: string) {
  const table = tableResolver(schemaName);
  return projection.tables.flatMap((definition) => definition.deferredIndexes?.(table) ?? []);
}

/**
 * ANALYZE of one table of a generation: statistics for its tables, so that the planner's first
 * plans after the switch are made on its data (without them, a page of orders bitmap-scans and
 * sorts the tenant's whole table).
 */
export function analyzeStatement(schemaName: string, table: string) {
  return sql.typeAlias('void')`ANALYZE ${sql.identifier([schemaName, table])}`;
}

/** Points the projection's views in read_models at a generation's tables. */
export async function pointViews(db: CommonQueryMethods, projection: Projection, schemaName: string): Promise<void> {
  for (const definition of projection.tables) {
    const view = sql.identifier([readModelSchema, definition.name]);
    await db.query(sql.typeAlias('void')`DROP VIEW IF EXISTS ${view}`);
    await db.query(sql.typeAlias('void')`CREATE VIEW ${view} AS SELECT * FROM ${sql.identifier([schemaName, definition.name])}`);
  }
}

/** SQLSTATEs of a lock the switch gave up waiting for: lock_not_available (its lock_timeout), deadlock_detected. */
const lockGivenUp = new Set(['55P03', '40P01']);

/**
 * Points the views of every projection of a switch at its new generation, in the switch's
 * transaction, without ever making a reader fail.
 *
 * A read statement takes ACCESS SHARE on several views, one after the other, in an order its plan
 * fixes (a guarded read of orders takes the orders view, then the key guard's tenants and members;
 * an analytics read takes the figures' views before the items'); each DROP VIEW takes ACCESS
 * EXCLUSIVE. Repointing view after view, a switch could hold one that a reader wants next while it
 * waits for one that reader holds: a deadlock, which Postgres breaks by failing one of the two (a
 * 500, or the whole replay). So every view is repointed under a lock_timeout shorter than
 * deadlock_timeout, in a savepoint: a switch that cannot take them all by then gives back what it
 * took (the savepoint rolls back) before a waiting reader's deadlock check can find it in a cycle,
 * and tries again a little later (readers wait at most that long behind it meanwhile). The views of
 * the projections that govern access (tenants, members: the key guard's) go last, as guarded reads
 * take them, so the common case takes no second attempt. Only views are taken under the timeout:
 * readers reach the old tables through them alone (the projector's batches wait for the generation
 * rows the switch holds), and the drop of those tables may wait for an autovacuum, which Postgres
 * cancels after deadlock_timeout.
 */
export async function pointViewsForSwitch(
  tx: DatabaseTransactionConnection,
  switches: readonly { readonly projection: Projection; readonly schemaName: string }[],
  options: { readonly logger: Logger; readonly signal?: AbortSignal | undefined },
): Promise<void> {
  const last = (p: Projection) => Number(p.governsAccess === true);
  const ordered = [...switches].sort((a, b) => last(a.projection) - last(b.projection));
  const timeout = await tx.oneFirst(sql.type(z.object({ timeout: z.string() }))`
    SELECT (greatest(1, extract(epoch FROM current_setting('deadlock_timeout')::interval) * 500))::int || 'ms' AS timeout
  `);
  for (let attempt = 1; ; attempt += 1) {
    options.signal?.throwIfAborted();
    try {
      // Retried here, not by slonik (which would run it again at once on a deadlock).
      await tx.transaction(async (savepoint) => {
        const previous = await savepoint.oneFirst(sql.type(z.object({ previous: z.string() }))`SELECT current_setting('lock_timeout') AS previous`);
        await savepoint.query(sql.typeAlias('void')`SELECT FROM set_config('lock_timeout', ${timeout}, true)`);
        for (const { projection, schemaName } of ordered) await pointViews(savepoint, projection, schemaName);
        await savepoint.query(sql.typeAlias('void')`SELECT FROM set_config('lock_timeout', ${previous}, true)`);
      }, 1);
      return;
    } catch (error) {
      const code = sqlState(error);
      if (code === undefined || !lockGivenUp.has(code)) throw error;
      options.logger[attempt % 10 === 0 ? 'warn' : 'debug']({ attempt, code }, 'switch: readers hold the views; trying again');
      await sleep(Math.min(1000, 20 * attempt) * (0.5 + Math.random()), undefined, { signal: options.signal });
    }
  }
}

export async function dropGenerationSchema(db: CommonQueryMethods, schemaName: string): Promise<void> {
  await db.query(sql.typeAlias('void')`DROP SCHEMA IF EXISTS ${sql.identifier([schemaName])} CASCADE`);
}

export async function setGenerationState(
  db: CommonQueryMethods,
  generation: Pick<Generation, 'projection' | 'generation'>,
  state: GenerationState,
  error?: string,
): Promise<void> {
  await db.query(sql.typeAlias('void')`
    UPDATE projection_generations SET state = ${state}, error = ${error ?? null}, updated_at = now()
    WHERE projection = ${generation.projection} AND generation = ${generation.generation}
  `);
}

/**
 * Gives every projection without an active generation its first one (empty tables, views, a
 * checkpoint at the start of the log). Safe when several processes start at once.
 */
export async function ensureActiveGenerations(pool: DatabasePool, projections: readonly Projection[]): Promise<void> {
  const active = new Set((await loadGenerations(pool, ['active'])).map((g) => g.projection));
  for (const projection of projections.filter((p) => !active.has(p.name))) {
    await pool.transaction(async (tx) => {
      await tx.query(sql.typeAlias('void')`SELECT FROM pg_advisory_xact_lock(hashtext(${`supply-projection-generation:${projection.name}`}))`);
      const existing = await tx.maybeOne(sql.type(z.object({ generation: z.number().int() }))`
        SELECT generation FROM projection_generations WHERE projection = ${projection.name} AND state = 'active'
      `);
      if (existing) return;
      const generation = await createGeneration(tx, projection, 'active');
      await pointViews(tx, projection, generation.schemaName);
    });
  }
}

export type CheckpointAdvance = {
  readonly generation: Generation;
  readonly to: LogPosition;
  readonly seen: number;
  readonly applied: number;
  readonly lastRecordedAt: string;
};

/**
 * Moves checkpoints by compare-and-set: each row must still be in the expected state at the
 * expected position, otherwise nothing moves and CheckpointConflictError is thrown (another
 * projector got there first, or a replay switched generations). Called first in the batch
 * transaction, it also locks the rows until the batch commits.
 */
export async function advanceCheckpoints(db: CommonQueryMethods, advances: readonly CheckpointAdvance[]): Promise<void> {
  if (advances.length === 0) return;
  const result = await db.query(checkpointAdvanceStatement(advances));
  expectCheckpointsAdvanced(advances, result.rowCount);
}

/**
 * The statement of advanceCheckpoints, for a caller that runs it on a connection of its own (a
 * COPY lane); its row count must then go through expectCheckpointsAdvanced.
 */
export function checkpointAdvanceStatement(advances: readonly CheckpointAdvance[]) {
  const ordered = sortedAdvances(advances);
  // Rows are locked in projection order first, as a replay's switch locks them: two transactions
  // taking the same rows in the same order cannot deadlock.
  return sql.typeAlias('void')`
    WITH advance AS (
      SELECT * FROM ${sql.unnest(
        ordered.map((a) => [
          a.generation.projection,
          a.generation.generation,
          a.generation.state,
          a.generation.checkpoint.tx,
          a.generation.checkpoint.seq,
          a.to.tx,
          a.to.seq,
          a.seen,
          a.applied,
          a.lastRecordedAt,
        ]),
        ['text', 'int4', 'text', 'int8', 'int8', 'int8', 'int8', 'int8', 'int8', 'timestamptz'],
      )} AS a(projection, generation, state, from_tx, from_seq, to_tx, to_seq, seen, applied, recorded_at)
    ),
    locked AS (
      SELECT g.projection, g.generation FROM projection_generations AS g
      WHERE (g.projection, g.generation) IN (SELECT projection, generation FROM advance)
      ORDER BY g.projection
      FOR UPDATE
    )
    UPDATE projection_generations AS g
    SET checkpoint_tx = a.to_tx, checkpoint_seq = a.to_seq, events_seen = g.events_seen + a.seen,
      events_applied = g.events_applied + a.applied, checkpoint_recorded_at = a.recorded_at, updated_at = now()
    FROM advance AS a, locked AS l
    WHERE l.projection = a.projection AND l.generation = a.generation
      AND g.projection = a.projection AND g.generation = a.generation AND g.state = a.state
      AND g.checkpoint_tx = a.from_tx AND g.checkpoint_seq = a.from_seq
  `;
}

/** Throws CheckpointConflictError unless every checkpoint of `advances` moved. */
export function expectCheckpointsAdvanced(advances: readonly CheckpointAdvance[], rowCount: number): void {
  if (rowCount !== advances.length) {
    throw new CheckpointConflictError(
      sortedAdvances(advances)
        .map((a) => `${a.generation.projection}#${a.generation.generation}`)
        .join(', '),
    );
  }
}

function sortedAdvances(advances: readonly CheckpointAdvance[]): CheckpointAdvance[] {
  return [...advances].sort((a, b) => (a.generation.projection < b.generation.projection ? -1 : 1));
}

/** The generation after a committed advance (for the caller's in-memory copy). */
export function advanced(generation: Generation, advance: CheckpointAdvance): Generation {
  return {
    ...generation,
    checkpoint: advance.to,
    eventsSeen: generation.eventsSeen + BigInt(advance.seen),
    eventsApplied: generation.eventsApplied + BigInt(advance.applied),
    checkpointRecordedAt: advance.lastRecordedAt,
  };
}

/**
 * Whether a generation an earlier replay left building can be resumed: it was built for the
 * projection's current definition, and its schema holds every one of the projection's tables.
 * (What it holds is what its committed batches wrote: each batch's rows commit with its checkpoint.)
 */
export async function buildIsIntact(db: CommonQueryMethods, projection: Projection, generation: Generation): Promise<boolean> {
  if (generation.state !== 'building' || generation.definitionVersion !== projection.version) return false;
  const present = await db.anyFirst(sql.type(z.object({ name: z.string() }))`
    SELECT c.relname AS name FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
    WHERE n.nspname = ${generation.schemaName} AND c.relkind IN ('r', 'p')
  `);
  return projection.tables.every((definition) => present.includes(definition.name));
}

/** An index's definition without its name and schema: what two equal indexes have in common. */
const indexShape = sql.fragment`regexp_replace(pg_get_indexdef(c.oid), '^CREATE (UNIQUE )?INDEX \\S+ ON \\S+[.]', 'CREATE \\1INDEX ON ')`;

/**
 * The deferred index statements of a generation whose index it does not have yet: a resumed
 * rebuild may find some built by the replay that was killed (during its index builds, or after a
 * load from the log). What each statement builds is learnt by running it on empty copies of the
 * tables in a scratch schema, in a transaction that is rolled back.
 */
export async function missingDeferredIndexes(pool: DatabasePool, projection: Projection, schemaName: string) {
  const statements = deferredIndexStatements(projection, schemaName);
  if (statements.length === 0) return [];
  const existing = await pool.anyFirst(sql.type(z.object({ shape: z.string() }))`
    SELECT ${indexShape} AS shape FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
    WHERE n.nspname = ${schemaName} AND c.relkind = 'i'
  `);
  const scratch = `${schemaName}_probe`;
  const shapes: string[] = [];
  await pool
    .transaction(async (tx) => {
      await tx.query(sql.typeAlias('void')`CREATE SCHEMA ${sql.identifier([scratch])}`);
      const table = tableResolver(scratch);
      for (const definition of projection.tables) for (const statement of definition.create(table)) await tx.query(statement);
      for (const statement of deferredIndexStatements(projection, scratch)) {
        await tx.query(statement);
        shapes.push(
          await tx.oneFirst(sql.type(z.object({ shape: z.string() }))`
            SELECT ${indexShape} AS shape FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
            WHERE n.nspname = ${scratch} AND c.relkind = 'i' ORDER BY c.oid DESC LIMIT 1
          `),
        );
      }
      throw new ProbeDone();
    })
    .catch((error: unknown) => {
      if (!(error instanceof ProbeDone)) throw error;
    });
  return statements.filter((_, index) => !existing.includes(shapes[index] ?? ''));
}

/** Rolls the probe of missingDeferredIndexes back. */
class ProbeDone extends Error {}

/**
 * Generations left 'building' by a replay that died (nobody holds their replay lock any more): per
 * projection, the newest one is resumed when it is intact (buildIsIntact) and `fresh` is not
 * asked for; every other one is marked failed and dropped.
 */
export async function unfinishedBuilds(pool: DatabasePool, projections: readonly Projection[], fresh: boolean, logger: Logger): Promise<Map<string, Generation>> {
  const building = (await loadGenerations(pool, ['building'])).filter((g) => projections.some((p) => p.name === g.projection));
  const resumable = new Map<string, Generation>();
  for (const projection of projections) {
    const newest = building.filter((g) => g.projection === projection.name).at(-1);
    if (newest !== undefined && !fresh && (await buildIsIntact(pool, projection, newest))) resumable.set(projection.name, newest);
  }
  for (const generation of building) {
    if (resumable.get(generation.projection) === generation) continue;
    logger.warn(
      { projection: generation.projection, generation: generation.generation, fresh },
      fresh ? 'dropping the generation an earlier replay left unfinished (--fresh)' : 'dropping a generation an earlier replay left unfinished',
    );
    await pool.transaction(async (tx) => {
      await dropGenerationSchema(tx, generation.schemaName);
      await setGenerationState(tx, generation, 'failed', fresh ? 'abandoned: a fresh replay started over' : 'abandoned: the replay that built it did not finish');
    });
  }
  for (const generation of resumable.values()) {
    logger.warn(
      { projection: generation.projection, generation: generation.generation, eventsSeen: generation.eventsSeen.toString() },
      'resuming the generation an earlier replay left unfinished, from its last committed batch',
    );
  }
  return resumable;
}
