import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

/*
 * host.json of the embedded database (see pgliteHost.ts), readable without loading PGlite: who
 * hosts the database of a DATA_DIR, so that a second process can name it.
 */

/** host.json: the hosting process, the loopback port of the database, and the HTTP port it serves once listening. */
export type HostRecord = { pid: number; port: number; httpPort?: number };

/** "the embedded database in DIR is held by process N (serving HTTP on port P; the database on 127.0.0.1:Q)" */
export function heldBy(dir: string, host: HostRecord): string {
  const http = host.httpPort === undefined ? '' : `, supply-api serving HTTP on port ${host.httpPort}`;
  return `the embedded database in ${dir} is held by process ${host.pid}${http} (the database itself on 127.0.0.1:${host.port})`;
}

/** The live process hosting the embedded database of `dataDir`, if any. */
export async function embeddedHost(dataDir: string): Promise<HostRecord | undefined> {
  const host = await readHostRecord(path.join(dataDir, 'pglite', 'host.json'));
  return host !== undefined && isAlive(host.pid) ? host : undefined;
}

/** Adds the HTTP port this process serves to its host.json, so that others can say who holds the database. */
export async function recordHttpPort(dataDir: string, httpPort: number): Promise<void> {
  const hostFile = path.join(dataDir, 'pglite', 'host.json');
  const host = await readHostRecord(hostFile);
  if (host?.pid !== process.pid) return;
  const temporary = `${hostFile}.${process.pid}.tmp`;
  await writeFile(temporary, JSON.stringify({ ...host, httpPort } satisfies HostRecord));
  await rename(temporary, hostFile);
}

export async function readHostRecord(file: string): Promise<HostRecord | undefined> {
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      'pid' in parsed &&
      'port' in parsed &&
      typeof parsed.pid === 'number' &&
      typeof parsed.port === 'number'
    ) {
      const httpPort = 'httpPort' in parsed && typeof parsed.httpPort === 'number' ? parsed.httpPort : undefined;
      return { pid: parsed.pid, port: parsed.port, ...(httpPort === undefined ? {} : { httpPort }) };
    }
    return undefined;
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
}
