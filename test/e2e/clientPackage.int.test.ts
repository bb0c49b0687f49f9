import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { issuableScopes } from '../../src/keys/scopes.js';
import { apiClient, useApiBed } from '../support/useApiBed.js';
import { runCli } from '../support/cli.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const clientDir = path.join(root, 'clients/typescript');
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');

/** An integrator's program, as the client's README shows it: sync orders from a saved cursor, print what changed. */
const consumer = `import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createClient, NetworkError, ProblemError, type OrderListItem } from '@dental-supply/read-api-client';

const [baseUrl = '', apiKey = '', stateFile = 'cursor.txt'] = process.argv.slice(2);

/** Response enums are open: a status this program does not know yet takes the default branch. */
function stage(status: OrderListItem['status']): string {
  switch (status) {
    case 'closed':
    case 'cancelled':
      return 'done';
    default:
      return status;
  }
}

async function main(): Promise<void> {
  const client = createClient({ baseUrl, apiKey, retry: { onRetry: ({ waitSeconds }) => console.error(\`429: waiting \${waitSeconds} s\`) } });
  const saved = existsSync(stateFile) ? readFileSync(stateFile, 'utf8') : undefined;
  const sync = client.sync.orders({ cursor: saved });
  const changed: { orderId: string; stage: string; version: number }[] = [];
  for await (const order of sync) changed.push({ orderId: order.orderId, stage: stage(order.status), version: order.version });
  if (sync.cursor !== undefined) writeFileSync(stateFile, sync.cursor);
  console.log(JSON.stringify({ full: saved === undefined, requests: sync.requests, changed }));
}

main().catch((error: unknown) => {
  if (error instanceof ProblemError) console.error(\`\${error.status} \${error.code} (request \${error.requestId})\`);
  else if (error instanceof NetworkError) console.error(\`unreachable: \${error.url}\`);
  else console.error(error);
  process.exitCode = 1;
});
`;

/** The same package from CommonJS. */
const requirer = `const { createClient } = require('@dental-supply/read-api-client');
createClient({ baseUrl: process.argv[2], apiKey: process.argv[3] }).get('/v1/me').then((me) => console.log(JSON.stringify(me)));
`;

const resolutions = {
  node16: { module: 'node16', moduleResolution: 'node16' },
  bundler: { module: 'esnext', moduleResolution: 'bundler' },
  node10: { module: 'commonjs', moduleResolution: 'node10', esModuleInterop: true },
} as const;

/**
 * What the README's snippets take as given (its text names them): a client, and the integrator's
 * own cursor store and upsert. Snippets that make their own client get none of it.
 */
const snippetPrelude = `import type { OrderListItem, ReadApiClient } from '@dental-supply/read-api-client';
declare const client: ReadApiClient;
declare function loadCursor(): Promise<string | undefined>;
declare function saveCursor(cursor: string): Promise<void>;
declare function upsert(order: OrderListItem): Promise<void>;
`;

/** The TypeScript code blocks of a Markdown text. */
function typeScriptBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '');
}

/** The source maps of an installed package whose sources are neither in the package nor in the map itself. */
async function unresolvedSourceMaps(packageDir: string): Promise<string[]> {
  const entries = await readdir(packageDir, { recursive: true });
  const maps = entries.filter((entry) => entry.endsWith('.map'));
  const missing: string[] = [];
  for (const map of maps) {
    const parsed = JSON.parse(await readFile(path.join(packageDir, map), 'utf8')) as { sourceRoot?: string; sources: string[]; sourcesContent?: (string | null)[] };
    parsed.sources.forEach((source, index) => {
      const inline = typeof parsed.sourcesContent?.[index] === 'string';
      if (!inline && !existsSync(path.resolve(path.dirname(path.join(packageDir, map)), parsed.sourceRoot ?? '', source))) missing.push(`${map}: ${source}`);
    });
  }
  return missing;
}

// The sync reads a feed after CLI appends: a cluster of the file's own, so that no other file's transaction holds the log's horizon back.
const given = useApiBed({ ownCluster: true, scopes: issuableScopes, bed: { tenants: 1 }, bootTimeoutMs: 240_000 });
const { get, allPages } = apiClient(given);
let scratch: string;

/** tsc's output for a project with this configuration in the scratch project (empty: no error). */
async function typeCheck(configFile: string, config: object): Promise<string> {
  await writeFile(path.join(scratch, configFile), JSON.stringify(config));
  const checked = await run(process.execPath, [tsc, '-p', configFile], { cwd: scratch, timeout: 120_000 }).catch((failure: { stdout?: string }) => ({ stdout: failure.stdout ?? 'failed' }));
  return checked.stdout;
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'read-api-client-consumer-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('the client as a package (npm pack, installed into a project outside the repository)', () => {
  test('type-checks a consumer under node16, bundler and node10 resolution, and its sync gives exactly the orders changed since its saved cursor, across restarts', async () => {
    expect(path.relative(root, scratch).startsWith('..')).toBe(true);
    const packed = await run('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: clientDir, timeout: 180_000 });
    const [{ filename, files }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string; files: { path: string }[] }];
    const shipped = files.map((file) => file.path);
    expect(shipped).toEqual(expect.arrayContaining(['README.md', 'LICENSE', 'CHANGELOG.md', 'package.json', 'dist/esm/index.js', 'dist/esm/index.d.ts', 'dist/cjs/index.js', 'dist/cjs/index.d.ts', 'dist/cjs/package.json']));
    expect(shipped.filter((file) => file.startsWith('src/') || file.startsWith('test/'))).toEqual([]);

    await writeFile(path.join(scratch, 'package.json'), JSON.stringify({ name: 'erp-connector', private: true, type: 'module' }));
    await run('npm', ['install', path.join(scratch, filename), '@types/node@20', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: scratch, timeout: 180_000 });
    const installedDir = path.join(scratch, 'node_modules/@dental-supply/read-api-client');
    const installed = JSON.parse(await readFile(path.join(installedDir, 'package.json'), 'utf8')) as { private?: boolean; version: string; scripts?: Record<string, string> };
    expect(installed.private).toBeUndefined();
    // Nothing runs when a consumer installs it (npm warns of install scripts), and its source maps lead somewhere.
    expect.soft(Object.keys(installed.scripts ?? {}).filter((script) => ['preinstall', 'install', 'postinstall', 'prepare'].includes(script))).toEqual([]);
    expect(shipped.filter((file) => file.endsWith('.map')).length).toBeGreaterThan(0);
    expect.soft(await unresolvedSourceMaps(installedDir)).toEqual([]);
    await writeFile(path.join(scratch, 'consumer.ts'), consumer);
    await writeFile(path.join(scratch, 'requirer.cjs'), requirer);
    expect(consumer.split('\n').length).toBeLessThanOrEqual(35);

    // As a consumer's tsconfig usually has it (tsc --init): skipLibCheck. Timed for the log, unbounded.
    const seconds: Record<string, number> = {};
    for (const [name, options] of Object.entries(resolutions)) {
      const emit = name === 'node16';
      const compilerOptions = { target: 'es2022', strict: true, skipLibCheck: true, types: ['node'], ...options, ...(emit ? { outDir: 'out' } : { noEmit: true }) };
      const started = performance.now();
      expect(await typeCheck(`tsconfig.${name}.json`, { compilerOptions, files: ['consumer.ts'] }), name).toBe('');
      seconds[name] = (performance.now() - started) / 1000;
    }
    console.log(`type-checking the 30-line consumer (seconds; load ${os.loadavg()[0]?.toFixed(1)}): ${JSON.stringify(seconds)}`);
    // The package's own declaration files, checked too (ESM's under node16, CommonJS's under node10).
    await writeFile(path.join(scratch, 'declarations.ts'), "import { createClient } from '@dental-supply/read-api-client';\nexport const make = createClient;\n");
    for (const name of ['node16', 'node10'] as const) {
      const compilerOptions = { target: 'es2022', strict: true, skipDefaultLibCheck: true, lib: ['es2022', 'dom'], types: [], noEmit: true, ...resolutions[name] };
      expect(await typeCheck(`tsconfig.declarations-${name}.json`, { compilerOptions, files: ['declarations.ts'] }), name).toBe('');
    }

    // Every snippet of the README, as shipped, type-checks under strict in the consumer's project.
    const snippets = typeScriptBlocks(await readFile(path.join(installedDir, 'README.md'), 'utf8'));
    expect(snippets.length).toBeGreaterThanOrEqual(3);
    const snippetFiles = await Promise.all(
      snippets.map(async (snippet, index) => {
        const file = `readme-snippet-${index + 1}.ts`;
        await writeFile(path.join(scratch, file), `${snippet.includes('createClient(') ? '' : snippetPrelude}${snippet}export {};\n`);
        return file;
      }),
    );
    const snippetOptions = { target: 'es2022', strict: true, noUncheckedIndexedAccess: true, skipLibCheck: true, types: ['node'], noEmit: true, ...resolutions.node16 };
    expect.soft(await typeCheck('tsconfig.snippets.json', { compilerOptions: snippetOptions, files: snippetFiles })).toBe('');

    const { bed, key, tenant } = given;
    const syncOnce = async () => {
      const { stdout } = await run(process.execPath, ['out/consumer.js', bed.baseUrl, key, 'cursor.txt'], { cwd: scratch, timeout: 60_000 });
      return JSON.parse(stdout) as { full: boolean; requests: number; changed: { orderId: string; stage: string; version: number }[] };
    };
    const full = await syncOnce();
    const listed = (await allPages<{ orderId: string }>('/v1/orders')).map((order) => order.orderId);
    expect(full.full).toBe(true);
    expect(full.changed.map((order) => order.orderId).sort()).toEqual([...listed].sort());

    // A restart with nothing changed: one request, nothing.
    expect(await syncOnce()).toEqual({ full: false, requests: 1, changed: [] });

    const env = { DATABASE_URL: bed.database.url };
    const placed = await runCli(['console', 'place-order', '--workspace', tenant.workspaceId], env);
    expect(placed.code, placed.stderr).toBe(0);
    const { orderId: placedId } = JSON.parse(placed.stdout) as { orderId: string };
    const open = await get<{ data: { orderId: string }[] }>('/v1/orders?status=submitted&limit=1');
    const advancedId = open.data.find((order) => order.orderId !== placedId)?.orderId ?? placedId;
    const advanced = await runCli(['console', 'advance-order', '--workspace', tenant.workspaceId, '--order', advancedId], env);
    expect(advanced.code, advanced.stderr).toBe(0);
    await bed.settle();

    const changed = await syncOnce();
    expect(changed.full).toBe(false);
    expect(changed.changed.map((order) => order.orderId).sort()).toEqual([...new Set([placedId, advancedId])].sort());
    expect(await syncOnce()).toEqual({ full: false, requests: 1, changed: [] });

    const required = await run(process.execPath, ['requirer.cjs', bed.baseUrl, key], { cwd: scratch, timeout: 60_000 });
    expect(JSON.parse(required.stdout)).toMatchObject({ workspaceId: tenant.workspaceId });
  }, 600_000);
});
