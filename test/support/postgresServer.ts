import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Debian's server binaries of the newest installed major version (`/usr/lib/postgresql/<v>/bin`),
 * or undefined when there are none. `POSTGRES_BIN_DIR` overrides.
 */
export function postgresBinDir(): string | undefined {
  const configured = process.env.POSTGRES_BIN_DIR;
  if (configured !== undefined && configured !== '') return configured;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name) && existsSync(path.join(root, name, 'bin', 'pg_basebackup')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : path.join(root, versions[0], 'bin');
}

type PostgresUser = { readonly wrap: (command: string, args: readonly string[]) => [string, string[]]; readonly uid?: number; readonly gid?: number };

/** The server tools run as `postgres` (initdb refuses root): directly when that is who we are, through runuser when root. */
function asPostgres(): PostgresUser | undefined {
  if (process.getuid?.() === 0) {
    const id = (flag: 'u' | 'g') => Number(execFileSync('id', [`-${flag}`, 'postgres'], { encoding: 'utf8' }).trim());
    return { wrap: (command, args) => ['runuser', ['-u', 'postgres', '--', command, ...args]], uid: id('u'), gid: id('g') };
  }
  if (os.userInfo().username === 'postgres') return { wrap: (command, args) => [command, [...args]] };
  return undefined;
}

/** Why a Postgres server of a test's own cannot be started here, or undefined when it can. */
export function postgresServerUnavailable(): string | undefined {
  if (postgresBinDir() === undefined) return 'no PostgreSQL server binaries under /usr/lib/postgresql/<version>/bin (Debian package postgresql)';
  try {
    if (asPostgres() === undefined) return 'the PostgreSQL tools must run as root (through runuser) or as the postgres user';
  } catch (error) {
    return `no postgres user: ${error instanceof Error ? error.message : String(error)}`;
  }
  return undefined;
}

export type PostgresTools = {
  /** Runs a server tool (`initdb`, `pg_ctl`, …) as the postgres user; resolves to its stdout. */
  tool(name: string, args: readonly string[]): Promise<string>;
  /** A new temporary folder the postgres user owns. */
  folder(prefix: string): Promise<string>;
};

/** The server tools of this machine, or an error saying why a test cannot start a server of its own. */
export function postgresTools(): PostgresTools {
  const unavailable = postgresServerUnavailable();
  if (unavailable !== undefined) throw new Error(`cannot start a Postgres server of the test's own: ${unavailable}`);
  const bin = postgresBinDir() as string;
  const user = asPostgres() as PostgresUser;
  return {
    tool: async (name, args) => {
      const [command, argv] = user.wrap(path.join(bin, name), args);
      const { stdout } = await run(command, argv, { env: { ...process.env, LC_ALL: 'C.UTF-8' }, maxBuffer: 16 * 1024 * 1024 });
      return stdout;
    },
    folder: async (prefix) => {
      const folder = await mkdtemp(path.join(os.tmpdir(), prefix));
      if (user.uid !== undefined && user.gid !== undefined) await chown(folder, user.uid, user.gid);
      return folder;
    },
  };
}
