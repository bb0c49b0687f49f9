import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Logger } from './logger.js';
import { sql } from './sql.js';

/** migrations/ of the package, from src/platform/ or from its compiled copy in dist/src/platform/ (bin/build.js). */
export const migrationsDir = fileURLToPath(new URL(import.meta.url.includes('/dist/src/platform/') ? '../../../migrations/' : '../../migrations/', import.meta.url));

/** The name of the database a pool is connected to (what an operator sees in `psql -l`). */
export async function databaseName(pool: DatabasePool): Promise<string> {
  return pool.oneFirst(sql.type(z.object({ name: z.string() }))`SELECT current_database() AS name`);
}

/** Arbitrary but fixed: every process that migrates serialises on this advisory lock. */
const migrationLockKey = 727_310_001;

type Migration = { version: number; name: string; checksum: string; text: string };

const migrationFileName = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export async function loadMigrations(dir: string = migrationsDir): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((file) => file.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = migrationFileName.exec(file);
    if (!match?.[1] || !match[2]) {
      throw new Error(`migration file ${file} must be named NNNN_name.sql`);
    }
    const text = await readFile(path.join(dir, file), 'utf8');
    migrations.push({
      version: Number(match[1]),
      name: match[2],
      checksum: createHash('sha256').update(text).digest('hex'),
      text,
    });
  }
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`migrations must be numbered 0001, 0002, … without gaps; found ${migration.version} at place ${index + 1}`);
    }
  });
  return migrations;
}

/**
 * Splits a migration file into statements at top-level semicolons (slonik runs one statement per
 * query), leaving semicolons inside quotes, dollar-quoted bodies and comments alone.
 */
export function splitStatements(text: string): string[] {
  const statements: string[] = [];
  let current = '';
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    const dollar = /^\$[A-Za-z_]*\$/.exec(rest);
    let token: string;
    if (rest.startsWith('--')) {
      const end = text.indexOf('\n', i);
      token = end === -1 ? rest : text.slice(i, end + 1);
    } else if (rest.startsWith('/*')) {
      const end = text.indexOf('*/', i + 2);
      token = end === -1 ? rest : text.slice(i, end + 2);
    } else if (rest.startsWith("'")) {
      const match = /^'(?:[^']|'')*'/.exec(rest);
      token = match ? match[0] : rest;
    } else if (dollar) {
      const end = text.indexOf(dollar[0], i + dollar[0].length);
      token = end === -1 ? rest : text.slice(i, end + dollar[0].length);
    } else if (rest.startsWith(';')) {
      if (current.trim() !== '') statements.push(current.trim());
      current = '';
      i += 1;
      continue;
    } else {
      token = rest.charAt(0);
    }
    current += token;
    i += token.length;
  }
  if (stripComments(current).trim() !== '') statements.push(current.trim());
  return statements.filter((statement) => stripComments(statement).trim() !== '');
}

function stripComments(statement: string): string {
  return statement.replace(/--[^\n]*\n?/g, '').replace(/\/\*[\s\S]*?\*\//g, '');
}

/**
 * A migration file is trusted, static SQL shipped with the service; it becomes one query token so
 * that it still runs through slonik (and its interceptors) like every other statement.
 */
function migrationStatement(text: string) {
  const strings = Object.freeze(Object.assign([text], { raw: Object.freeze([text]) })) as unknown as TemplateStringsArray;
  return sql.typeAlias('void')(strings);
}

const appliedRow = z.object({ version: z.number().int(), checksum: z.string() });

export type MigrationResult = { applied: number[]; current: number };

/**
 * Applies forward-only migrations, each in its own transaction, under a session advisory lock so
 * that processes starting together apply each file exactly once.
 */
export async function migrate(pool: DatabasePool, logger: Logger, dir: string = migrationsDir): Promise<MigrationResult> {
  const migrations = await loadMigrations(dir);
  return pool.connect(async (connection) => {
    await connection.query(sql.typeAlias('void')`SELECT FROM pg_advisory_lock(${migrationLockKey})`);
    try {
      await connection.query(sql.typeAlias('void')`
        CREATE TABLE IF NOT EXISTS schema_migrations (
          version integer PRIMARY KEY,
          name text NOT NULL,
          checksum text NOT NULL,
          applied_at timestamptz NOT NULL DEFAULT now()
        )
      `);
      const applied = await connection.any(sql.type(appliedRow)`SELECT version, checksum FROM schema_migrations ORDER BY version`);
      const appliedByVersion = new Map(applied.map((row) => [row.version, row.checksum]));
      const newlyApplied: number[] = [];
      for (const migration of migrations) {
        const checksum = appliedByVersion.get(migration.version);
        if (checksum !== undefined) {
          if (checksum !== migration.checksum) {
            throw new Error(`migration ${migration.version}_${migration.name} was changed after it was applied; add a new migration instead`);
          }
          continue;
        }
        await connection.transaction(async (transaction) => {
          for (const statement of splitStatements(migration.text)) {
            await transaction.query(migrationStatement(statement));
          }
          await transaction.query(sql.typeAlias('void')`
            INSERT INTO schema_migrations (version, name, checksum)
            VALUES (${migration.version}, ${migration.name}, ${migration.checksum})
          `);
        });
        logger.info({ version: migration.version, name: migration.name }, 'migration applied');
        newlyApplied.push(migration.version);
      }
      return { applied: newlyApplied, current: migrations.length };
    } finally {
      await connection.query(sql.typeAlias('void')`SELECT FROM pg_advisory_unlock(${migrationLockKey})`);
    }
  });
}
