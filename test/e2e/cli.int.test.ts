import { createHash } from 'node:crypto';
import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { runCli, startCli } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { loadMigrations } from '../../src/platform/migrate.js';
import { createPostgresTestDatabase, type TestDatabase } from '../support/databases.js';
import { services } from '../support/services.js';

const seedSummary = z.object({
  tenants: z.array(
    z.object({
      workspaceId: z.string(),
      memberIds: z.array(z.string()).min(1),
      members: z.array(z.object({ memberId: z.string(), status: z.enum(['active', 'suspended', 'removed']), permissions: z.array(z.string()) }).strict()).min(3),
      clinicIds: z.array(z.string()).min(1),
      warehouseIds: z.array(z.string()).min(1),
      orderIds: z.array(z.string()).min(1),
      boxIds: z.array(z.string()).min(1),
      itemIds: z.array(z.string()).min(1),
    }),
  ),
});
const issuedKey = z.object({ key: z.string(), prefix: z.string(), workspaceId: z.string(), scopes: z.array(z.string()) }).strict();

const asOf = '2026-11-01';

/** A DATA_DIR of its own for the enclosing describe block, removed afterwards. */
function useTemporaryDataDir(prefix: string): () => string {
  let dataDir: string | undefined;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), prefix));
  });
  afterAll(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });
  return () => {
    if (!dataDir) throw new Error('the data directory exists only inside the tests');
    return dataDir;
  };
}

const readyExport = z.object({ status: z.literal('ready'), byteSize: z.number(), checksum: z.string(), downloadUrl: z.string() });

/** Polls an export until it is ready. */
function pollExport(url: string, headers: Record<string, string>): Promise<z.infer<typeof readyExport>> {
  return eventually(async () => readyExport.parse(await (await fetch(url, { headers })).json()));
}

function parseJson<T>(schema: z.ZodType<T>, stdout: string): T {
  return schema.parse(JSON.parse(stdout));
}

describe('the command line without a database', () => {
  test('an unknown command is a usage error', async () => {
    const result = await runCli(['frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^supply-api: unknown command "frobnicate"/);
    expect(result.stdout).toBe('');
  });

  test('a bad setting stops the command with a message naming it', async () => {
    const result = await runCli(['migrate'], { DATABASE_URL: 'mysql://localhost/db' });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe('supply-api: Invalid setting DATABASE_URL: must start with postgres:// or postgresql:// (postgres://user@host:5432/db or postgres://user@pg1:5432,pg2:5432,pg3:5432/db)');
  });

  test('serve checks its port before anything else, and a database it cannot reach is named by its setting', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      // The database is unreachable too: the port is what it reports, so it was checked first.
      const busy = await runCli(['serve', '--port', String(port)], { DATABASE_URL: 'postgres://app:s3cret@127.0.0.1:1/supply' });
      expect(busy.code).toBe(1);
      expect(busy.stderr.trim()).toBe(`supply-api: error: port ${port} is already in use by another process: stop it, or choose another port with --port N or PORT=N`);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
    const refused = await runCli(['migrate'], { DATABASE_URL: 'postgres://app:s3cret@127.0.0.1:1/supply' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^supply-api: error: cannot use PostgreSQL at DATABASE_URL=postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/supply: .*ECONNREFUSED/);
    expect(refused.stderr).not.toContain('s3cret');
  });

  test('a bad argument names the argument', async () => {
    const result = await runCli(['seed', '--tenants', 'two']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--tenants must be a whole number/);
  });
});

describe.runIf(services.postgres)('the command line on real Postgres', () => {
  // Each test has a database of its own: the first migrates an empty one, the second needs a migrated one.
  let databases: TestDatabase[] = [];
  const givenDatabase = async (options: { migrated: boolean }) => {
    const database = await createPostgresTestDatabase(options);
    databases.push(database);
    return { database, env: { DATABASE_URL: database.url } };
  };
  afterEach(async () => {
    for (const database of databases) await database.close();
    databases = [];
  });

  test('migrate, seed, then issue, list and revoke a key', async () => {
    const { database, env } = await givenDatabase({ migrated: false });
    const migrated = await runCli(['migrate'], env);
    expect(migrated.code, migrated.stderr).toBe(0);
    const current = (await loadMigrations()).length;
    expect(JSON.parse(migrated.stdout)).toEqual({ engine: 'postgres', database: new URL(database.url).pathname.slice(1), applied: Array.from({ length: current }, (_, index) => index + 1), current });
    const remigrated = await runCli(['migrate'], env);
    expect(JSON.parse(remigrated.stdout)).toEqual({ engine: 'postgres', database: new URL(database.url).pathname.slice(1), applied: [], current });

    const seeded = await runCli(['seed', '--tenants', '2', '--seed', '7', '--as-of', asOf], env);
    expect(seeded.code, seeded.stderr).toBe(0);
    const summary = parseJson(seedSummary, seeded.stdout);
    expect(summary.tenants).toHaveLength(2);
    const [tenant] = summary.tenants;
    if (!tenant) throw new Error('no tenant');

    const again = await runCli(['seed', '--tenants', '2', '--seed', '7', '--as-of', asOf], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already seeded/);

    const owner = tenant.memberIds[0] ?? '';
    const issued = await runCli(['keys', 'issue', '--workspace', tenant.workspaceId, '--member', owner, '--scopes', 'orders:read,clinics:read', '--name', 'erp'], env);
    expect(issued.code, issued.stderr).toBe(0);
    const key = parseJson(issuedKey, issued.stdout);
    expect(key.key).toMatch(/^svc_test_[0-9A-Za-z]{24}_[0-9A-Za-z]{4}$/);
    expect(key).toMatchObject({ prefix: key.key.slice(0, 12), workspaceId: tenant.workspaceId, scopes: ['clinics:read', 'orders:read'] });

    const listed = await runCli(['keys', 'list', '--workspace', tenant.workspaceId], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).not.toContain(key.key.slice(12));
    expect(JSON.parse(listed.stdout)).toMatchObject({ keys: [{ prefix: key.prefix, name: 'erp', status: 'active', memberId: owner }] });

    const revoked = await runCli(['keys', 'revoke', '--prefix', key.prefix], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ prefix: key.prefix, status: 'revoked' });

    // As the README says: { "orderId", "number" }.
    const placed = await runCli(['console', 'place-order', '--workspace', tenant.workspaceId], env);
    expect(placed.code, placed.stderr).toBe(0);
    expect(JSON.parse(placed.stdout)).toEqual({ orderId: expect.any(String) as unknown, number: expect.any(Number) as unknown });
  });

  test('a key cannot carry a scope no key may hold, nor be issued for a stranger', async () => {
    const { env } = await givenDatabase({ migrated: true });
    const forbidden = await runCli(['keys', 'issue', '--workspace', 'ws_x', '--member', 'mem_x', '--scopes', 'orders.value:read'], env);
    expect(forbidden.code).toBe(2);
    expect(forbidden.stderr).toMatch(/no API key can hold the scope orders.value:read/);
    const unknownWorkspace = await runCli(['keys', 'issue', '--workspace', 'ws_nobody', '--member', 'mem_x', '--scopes', 'orders:read'], env);
    expect(unknownWorkspace.code).toBe(1);
    expect(unknownWorkspace.stderr).toMatch(/workspace ws_nobody/);
  });
});

// Each PGlite boot (WebAssembly) takes seconds, tens of seconds on a busy machine: these tests boot it several times.
describe('the command line on embedded PGlite', () => {
  const dataDir = useTemporaryDataDir('supply-cli-');

  test('migrate and seed without DATABASE_URL, then reach the database while serve holds it', async () => {
    const env = { DATA_DIR: dataDir() };
    const migrated = await runCli(['migrate'], env);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(JSON.parse(migrated.stdout)).toMatchObject({ engine: 'pglite', database: 'postgres', dataDir: dataDir(), current: (await loadMigrations()).length });

    const seeded = await runCli(['seed', '--tenants', '2', '--seed', '7', '--as-of', asOf], env);
    expect(seeded.code, seeded.stderr).toBe(0);
    const summary = parseJson(seedSummary, seeded.stdout);

    const server = await startCli(['serve', '--port', '0', '--roles', 'api'], env, /"msg":"serving"/);
    try {
      const [tenant] = summary.tenants;
      if (!tenant) throw new Error('no tenant');
      const issued = await runCli(['keys', 'issue', '--workspace', tenant.workspaceId, '--member', tenant.memberIds[0] ?? '', '--scopes', 'analytics:read'], env);
      expect(issued.code, issued.stderr).toBe(0);
      expect(parseJson(issuedKey, issued.stdout).workspaceId).toBe(tenant.workspaceId);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 180_000);
});

describe('the quick start: serve --demo on embedded PGlite', () => {
  const dataDir = useTemporaryDataDir('supply-demo-');

  const demoKey = /Demo API key \(shown once\): (svc_test_[0-9A-Za-z]{24}_[0-9A-Za-z]{4})/;
  const listening = /"port":(\d+),"roles":\["api","projector","worker"\],"msg":"serving"/;

  async function startDemo(): Promise<{ key: string; port: number; output: () => string; stop: () => Promise<number | null> }> {
    const server = await startCli(['serve', '--demo', '--port', '0'], { DATA_DIR: dataDir() }, listening);
    const key = demoKey.exec(server.output())?.[1];
    const port = Number(listening.exec(server.output())?.[1]);
    if (key === undefined) throw new Error(`no demo key in: ${server.output()}`);
    // Beside the key: how to sign in to the assistant endpoint, at the port actually bound.
    expect(server.output()).toContain(`Assistant endpoint (MCP, OAuth sign-in): http://localhost:${port}/mcp`);
    expect(server.output()).toMatch(/the sign-in code [0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4} \(member /);
    return { key, port, output: server.output, stop: server.stop };
  }

  test('seeds once, prints a fresh demo key on every start and revokes the previous one', async () => {
    const first = await startDemo();
    const health = await fetch(`http://127.0.0.1:${first.port}/healthz`);
    expect(health.status).toBe(200);
    // A second serve of the same DATA_DIR stops at once, naming the process that holds its database and its port.
    const held = await runCli(['serve', '--port', '0'], { DATA_DIR: dataDir() });
    expect(held.code).toBe(1);
    expect(held.stderr).toMatch(new RegExp(`held by process \\d+, supply-api serving HTTP on port ${first.port} \\(the database itself on 127\\.0\\.0\\.1:\\d+\\)`));
    const waited = await runCli(['projections', 'wait', '--timeout', '60'], { DATA_DIR: dataDir() });
    expect(waited.code, waited.stderr).toBe(0);
    expect(await (await fetch(`http://127.0.0.1:${first.port}/readyz`)).json()).toEqual({ status: 'ready', checks: { database: 'ok', projections: 'caught_up' } });
    // /v1 on the embedded database: the demo key reads, and pages carry a cursor.
    const auth = { authorization: `Bearer ${first.key}` };
    const me = await fetch(`http://127.0.0.1:${first.port}/v1/me`, { headers: auth });
    expect(me.status).toBe(200);
    expect(me.headers.get('x-ratelimit-limit')).toBe('120');
    const firstPage = (await (await fetch(`http://127.0.0.1:${first.port}/v1/orders?limit=2`, { headers: auth })).json()) as { nextCursor: string };
    expect(typeof firstPage.nextCursor).toBe('string');
    expect((await fetch(`http://127.0.0.1:${first.port}/openapi.json`)).status).toBe(200);
    // Analytics on the embedded database, and their evidence verified from the log by the command line.
    const briefing = await fetch(`http://127.0.0.1:${first.port}/v1/analytics/briefing?period=weekly`, { headers: auth });
    expect(briefing.status).toBe(200);
    const figures = z.object({ evidenceId: z.string(), figures: z.array(z.object({ metric: z.string(), evidenceId: z.string() })) }).parse(await briefing.json());
    for (const evidenceId of [figures.evidenceId, figures.figures.find((f) => f.metric === 'LOW_STOCK')?.evidenceId ?? '']) {
      const verified = await runCli(['evidence', 'verify', evidenceId], { DATA_DIR: dataDir() });
      expect(verified.code, verified.stderr).toBe(0);
      expect(JSON.parse(verified.stdout)).toMatchObject({ evidenceId, match: true });
    }
    // An export on the embedded defaults (in-process queue, local files): built, downloaded with a plain GET, checked.
    const posted = await fetch(`http://127.0.0.1:${first.port}/v1/analytics/exports`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'accept-language': 'pt' },
      body: '{"period":"weekly"}',
    });
    expect(posted.status).toBe(202);
    const { exportId } = z.object({ exportId: z.string() }).parse(await posted.json());
    const job = await pollExport(`http://127.0.0.1:${first.port}/v1/analytics/exports/${exportId}`, auth);
    expect(new URL(job.downloadUrl).port).toBe(String(first.port));
    const file = Buffer.from(await (await fetch(job.downloadUrl)).arrayBuffer());
    expect(file.length).toBe(job.byteSize);
    expect(createHash('sha256').update(file).digest('hex')).toBe(job.checksum);
    expect(file.toString('utf8')).toContain('Pedidos ainda não despachados');
    // A replay through the running service's embedded database switches every projection to generation 2.
    const replayed = await runCli(['projections', 'replay'], { DATA_DIR: dataDir() });
    expect(replayed.code, replayed.stderr).toBe(0);
    const status = z
      .object({ projections: z.array(z.object({ state: z.string(), generation: z.number(), deadLetters: z.number() })) })
      .parse(JSON.parse((await runCli(['projections', 'status'], { DATA_DIR: dataDir() })).stdout));
    expect(status.projections.length).toBeGreaterThanOrEqual(5);
    expect(status.projections.every((p) => p.state === 'live' && p.generation === 2 && p.deadLetters === 0)).toBe(true);
    expect(await first.stop()).toBe(0);

    const second = await startDemo();
    try {
      expect(second.key).not.toBe(first.key);
      expect(second.output()).toContain(`The demo key of the previous start (${first.key.slice(0, 12)}…) is revoked: it now answers 401.`);
      expect(second.output()).not.toContain(first.key.slice(12));
      const base = `http://127.0.0.1:${second.port}`;
      expect((await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${first.key}` } })).status).toBe(401);
      // The signing secret was generated once and kept in the database: the first process's cursor still reads.
      const nextPage = await fetch(`${base}/v1/orders?limit=2&cursor=${encodeURIComponent(firstPage.nextCursor)}`, { headers: { authorization: `Bearer ${second.key}` } });
      expect(nextPage.status).toBe(200);
      const listed = await runCli(['keys', 'list', '--workspace', 'ws_unknown'], { DATA_DIR: dataDir() });
      expect(JSON.parse(listed.stdout)).toEqual({ workspaceId: 'ws_unknown', keys: [] });
      const seeded = await runCli(['seed', '--tenants', '2', '--seed', '1'], { DATA_DIR: dataDir() });
      expect(seeded.code).toBe(1);
      expect(seeded.stderr).toMatch(/already seeded/);
      // The demo is seed 1 with two tenants: seeding it again names the demo workspace.
      const workspaceId = /workspace (ws_\S+) is already seeded/.exec(seeded.stderr)?.[1] ?? '';
      const keys = z
        .object({ keys: z.array(z.object({ prefix: z.string(), name: z.string(), status: z.string() })) })
        .parse(JSON.parse((await runCli(['keys', 'list', '--workspace', workspaceId], { DATA_DIR: dataDir() })).stdout)).keys;
      expect(keys.map((key) => [key.prefix, key.name, key.status])).toEqual([
        [first.key.slice(0, 12), 'demo', 'revoked'],
        [second.key.slice(0, 12), 'demo', 'active'],
      ]);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  }, 180_000);
});

