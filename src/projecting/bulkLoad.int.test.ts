import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createPostgresTestDatabase, silentLogger, type TestDatabase } from '../../test/support/databases.js';
import { event, testTenant } from '../../test/support/projectionTestBed.js';
import type { LogHead, RecordedEvent } from '../eventStore/eventStore.js';
import { createPostgresEventStore } from '../eventStore/postgresEventStore.js';
import { sql } from '../platform/sql.js';
import { decodeBatch, ReplayPoisonError, type BatchTarget } from './applyBatch.js';
import { BulkLoader } from './bulkLoad.js';
import { CheckpointConflictError, createGeneration, deferredIndexStatements, loadGenerations } from './generations.js';
import { insertOnlyFolding, ProjectionInvariantError, type InsertedRows, type Projection, type ProjectedEvent } from './projection.js';
import { applyReplayBatch } from './sideBySide.js';

/** Clinic openings at seq 1, 2, … (tx 1), named as given. */
function openings(names: readonly string[], firstSeq = 1): RecordedEvent[] {
  return names.map((name, index) => {
    const e = event('ClinicOpened', { clinicId: `cli_${firstSeq + index}`, name, status: 'active' });
    return { ...e, position: { tx: 1n, seq: BigInt(firstSeq + index) }, streamName: `supply.clinic-${e.tenantId}`, streamRevision: 0n, recordedAt: e.occurredAt };
  });
}

const poisonName = 'poison';

/** A name the table refuses (its CHECK), which the projection's own code lets through. */
const refusedByTable = 'refused by the table';

/** An insert-only projection of clinic names; counts the batches Node inserted (not by COPY). */
function namesProjection(name: string) {
  const calls = { apply: 0 };
  const rowOf = (e: ProjectedEvent) => {
    if (e.type !== 'ClinicOpened') throw new Error('unexpected event');
    if (e.data.name === poisonName) throw new ProjectionInvariantError(`clinic ${e.data.clinicId} is poison`);
    return [e.tenantId, e.position.seq, e.data.name, e.data.name.length % 2 === 0, null] as const;
  };
  const names: InsertedRows = {
    table: 'names',
    columns: [
      ['tenant_id', 'text'],
      ['seq', 'int8'],
      ['name', 'text'],
      ['even', 'bool'],
      ['note', 'text'],
    ],
    rowsOf: (events) => events.map(rowOf),
    duplicate: 'name recorded twice',
  };
  const projection: Projection = {
    name,
    version: 1,
    handles: ['ClinicOpened'],
    tables: [
      {
        name: 'names',
        create: (table) => [
          sql.typeAlias('void')`
            CREATE TABLE ${table('names')} (tenant_id text NOT NULL, seq bigint NOT NULL, name text NOT NULL CHECK (name <> 'refused by the table'), even boolean NOT NULL, note text)
          `,
        ],
      },
    ],
    fold: {
      rows: names,
      // Begun only for rows Node inserts itself (a COPY lane takes the rows, not the fold).
      begin: (context) => {
        calls.apply += 1;
        return insertOnlyFolding(names).begin(context);
      },
    },
  };
  return { projection, names, calls };
}

const nameRow = z.object({ seq: z.bigint(), name: z.string(), even: z.boolean(), note: z.string().nullable() });

describe('BulkLoader (COPY lanes of a rebuild, real Postgres)', () => {
  let database: TestDatabase | undefined;
  let loader: BulkLoader | undefined;
  const pool = () => {
    if (!database) throw new Error('no database');
    return database.pool;
  };
  const bulk = () => {
    if (!loader) throw new Error('no loader');
    return loader;
  };

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
    loader = new BulkLoader({ connectionUri: database.url }, silentLogger);
  });
  afterAll(async () => {
    await loader?.close();
    await database?.close();
  });

  const targetOf = async (projection: Projection): Promise<BatchTarget> => ({
    projection,
    generation: await pool().transaction((tx) => createGeneration(tx, projection, 'building')),
  });
  const rowsOf = (target: BatchTarget) =>
    pool().any(sql.type(nameRow)`SELECT seq, name, even, note FROM ${sql.identifier([target.generation.schemaName, 'names'])} ORDER BY seq`);
  const checkpointOf = async (target: BatchTarget) =>
    (await loadGenerations(pool(), ['building'])).find((g) => g.projection === target.projection.name)?.checkpoint.seq;

  const advanceTo = (target: BatchTarget, seq: number) => ({ generation: target.generation, to: { tx: 1n, seq: BigInt(seq) }, seen: seq, applied: seq, lastRecordedAt: '2026-01-01T00:00:00.000Z' });

  test('loads rows by COPY with their checkpoint, text as written (tabs, newlines, backslashes, \\N), never through apply', async () => {
    const { projection, calls } = namesProjection('bulk_text');
    const target = await targetOf(projection);
    const names = ['plain', 'tab\there', 'line\nbreak', 'back\\slash', '\\N', 'carriage\rreturn', 'ünïcødé ✓'];
    const copy = await bulk().open(target);
    await copy.write(decodeBatch(openings(names)).projected as ProjectedEvent[]);
    await copy.commit(advanceTo(target, names.length));

    expect(await checkpointOf(target)).toBe(BigInt(names.length));
    expect(await rowsOf(target)).toEqual(names.map((name, index) => ({ seq: BigInt(index + 1), name, even: name.length % 2 === 0, note: null })));
    expect(calls.apply).toBe(0);
  });

  test('a batch applied the ordinary way names the event at fault and writes nothing of it', async () => {
    const { projection, calls } = namesProjection('bulk_refused');
    const target = await targetOf(projection);
    const log = openings(['one', 'two', poisonName, 'four']);
    const replay = applyReplayBatch(pool(), [target], decodeBatch(log), silentLogger);
    await expect(replay).rejects.toThrow(ReplayPoisonError);
    await expect(replay).rejects.toThrow(log[2]?.eventId ?? 'no event');
    expect(calls.apply).toBeGreaterThan(0);
    expect(await rowsOf(target)).toEqual([]);
    expect(await checkpointOf(target)).toBe(0n);
  });

  test('a load from the log commits chunk by chunk, each with its checkpoint; a load that fails resumes from the last chunk that committed', async () => {
    const { projection, names: rows, calls } = namesProjection('bulk_from_log');
    const fromLog = {
      ...projection,
      fold: insertOnlyFolding({ ...rows, rowsOf: () => [], fromLog: { select: sql.fragment`e.tenant_id, e.global_position, e.data->>'name', length(e.data->>'name') % 2 = 0, NULL`, version: 1 } }),
    } satisfies Projection;
    // The log's head read directly (the store's head stops short of what other databases' open transactions may still see).
    const headOf = async (): Promise<LogHead> => {
      const last = await pool().one(sql.type(z.object({ tx: z.string(), seq: z.bigint(), recordedAt: z.string(), count: z.bigint() }))`
        SELECT transaction_id::text AS tx, global_position AS seq, to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "recordedAt",
          (SELECT count(*) FROM events) AS count
        FROM events ORDER BY transaction_id DESC, global_position DESC LIMIT 1
      `);
      return { position: { tx: BigInt(last.tx), seq: last.seq }, eventCount: last.count, lastRecordedAt: last.recordedAt };
    };
    const store = createPostgresEventStore({ pool: pool(), kind: 'postgres', logger: silentLogger, connectionUri: database?.url ?? '' });
    // Seven openings, one append each (seven transactions), then one refused by the table.
    const names = ['a', 'bb', 'ccc', 'dddd', 'e', 'ff', 'ggg'];
    for (const [index, name] of names.entries()) await store.append(`supply.clinic-${testTenant}-${index}`, [event('ClinicOpened', { clinicId: `cli_${index}`, name, status: 'active' })], 'no_stream');
    const head = await headOf();
    const target = await targetOf(fromLog);
    const generationOf = async () => (await loadGenerations(pool(), ['building'])).find((g) => g.projection === fromLog.name);

    // Chunks of 3 events: 3, 6, then the head; the refusal comes in the third chunk, after two commits.
    await store.append(`supply.clinic-${testTenant}-refused`, [event('ClinicOpened', { clinicId: 'cli_refused', name: refusedByTable, status: 'active' })], 'no_stream');
    const withRefusal = await headOf();
    await expect(bulk().loadFromLog(target, withRefusal, [], true, 3)).rejects.toThrow(/check constraint/);
    const left = await generationOf();
    expect(left?.eventsSeen).toBe(6n);
    expect((await rowsOf(target)).map((row) => row.name)).toEqual(names.slice(0, 6));
    expect(calls.apply).toBe(0);

    // Resumed from there up to the head before the refused event: the seventh opening only.
    if (left === undefined) throw new Error('no generation left building');
    const loaded = await bulk().loadFromLog({ ...target, generation: left }, head, deferredIndexStatements(fromLog, left.schemaName), true, 3);
    expect(loaded.generation.eventsSeen).toBe(BigInt(names.length));
    expect(loaded.generation.checkpoint).toEqual(head.position);
    expect(loaded.generation.checkpointRecordedAt).toBe(head.lastRecordedAt);
    expect((await generationOf())?.eventsSeen).toBe(BigInt(names.length));
    expect((await rowsOf(target)).map((row) => row.name)).toEqual(names);
  });

  test('a checkpoint moved by someone else refuses the COPY and writes nothing', async () => {
    const { projection } = namesProjection('bulk_conflict');
    const target = await targetOf(projection);
    const first = await bulk().open(target);
    await first.write(decodeBatch(openings(['first'])).projected as ProjectedEvent[]);
    await first.commit(advanceTo(target, 1));
    // `target` still holds the checkpoint before that commit.
    const second = await bulk().open(target);
    await second.write(decodeBatch(openings(['second'], 2)).projected as ProjectedEvent[]);
    await expect(second.commit(advanceTo(target, 2))).rejects.toThrow(CheckpointConflictError);
    expect((await rowsOf(target)).map((row) => row.name)).toEqual(['first']);
  });

  test('an open COPY takes the rows of many batches and commits them with one checkpoint; nothing shows before the commit', async () => {
    const { projection, calls } = namesProjection('bulk_open');
    const target = await targetOf(projection);
    const first = decodeBatch(openings(['a', 'b']));
    const second = decodeBatch(openings(['c', 'd', 'e'], 3));
    const copy = await bulk().open(target);
    await copy.write(first.projected as ProjectedEvent[]);
    await copy.write(second.projected as ProjectedEvent[]);
    expect(await rowsOf(target)).toEqual([]);
    const advance = { generation: target.generation, to: { tx: 1n, seq: 5n }, seen: 5, applied: 5, lastRecordedAt: '2026-01-01T00:00:00.000Z' };
    await copy.commit(advance);

    expect((await rowsOf(target)).map((row) => row.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(await checkpointOf(target)).toBe(5n);
    expect(calls.apply).toBe(0);
  });

  test('an open COPY the table refuses commits nothing, and the loader goes on with a new connection', async () => {
    const { projection } = namesProjection('bulk_open_refused');
    const target = await targetOf(projection);
    const copy = await bulk().open(target);
    await copy.write(decodeBatch(openings(['fine'])).projected as ProjectedEvent[]);
    // The refusal comes back from the server while the rows stream, or at the latest when the COPY ends.
    const refused = (async () => {
      await copy.write(decodeBatch(openings([refusedByTable], 2)).projected as ProjectedEvent[]);
      await copy.commit({ generation: target.generation, to: { tx: 1n, seq: 2n }, seen: 2, applied: 2, lastRecordedAt: '2026-01-01T00:00:00.000Z' });
    })();
    await expect(refused).rejects.toThrow(/check constraint/);
    expect(await rowsOf(target)).toEqual([]);
    expect(await checkpointOf(target)).toBe(0n);

    const again = await bulk().open(target);
    await again.write(decodeBatch(openings(['later'])).projected as ProjectedEvent[]);
    await again.commit(advanceTo(target, 1));
    expect(await checkpointOf(target)).toBe(1n);
    expect((await rowsOf(target)).map((row) => row.name)).toEqual(['later']);
  });

  test('an open COPY waits while the connection is full; a refusal of a large write fails it or its commit, with nothing committed and nothing left unhandled', async () => {
    const long = 'x'.repeat(100);
    const many = (count: number, first: number, lead: string[] = []) =>
      decodeBatch(openings([...lead, ...Array.from({ length: count - lead.length }, (_, index) => `${long}${index}`)], first)).projected as ProjectedEvent[];

    // 50 000 rows of about 150 bytes: far more than the stream buffers, so the writer waits for it to drain.
    const { projection } = namesProjection('bulk_open_full');
    const target = await targetOf(projection);
    const copy = await bulk().open(target);
    await copy.write(many(50_000, 1));
    await copy.commit({ generation: target.generation, to: { tx: 1n, seq: 50_000n }, seen: 50_000, applied: 50_000, lastRecordedAt: '2026-01-01T00:00:00.000Z' });
    expect(await rowsOf(target)).toHaveLength(50_000);

    // Refused by the first row: the server fails the COPY while the rest is still being sent, and
    // says so once it has read it (the write may have been taken by then: the commit reports it).
    const refused = namesProjection('bulk_open_full_refused');
    const refusedTarget = await targetOf(refused.projection);
    const failing = await bulk().open(refusedTarget);
    const advance = { generation: refusedTarget.generation, to: { tx: 1n, seq: 50_000n }, seen: 50_000, applied: 50_000, lastRecordedAt: '2026-01-01T00:00:00.000Z' };
    const attempt = (async () => {
      await failing.write(many(50_000, 1, [refusedByTable]));
      await failing.write(many(50_000, 50_001));
      await failing.commit(advance);
    })();
    await expect(attempt).rejects.toThrow(/check constraint/);
    expect(await rowsOf(refusedTarget)).toEqual([]);
    expect(await checkpointOf(refusedTarget)).toBe(0n);
  }, 60_000);
});
