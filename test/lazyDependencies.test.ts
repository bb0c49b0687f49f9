import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

/**
 * The clients of optional services (Redis, BullMQ, EventStoreDB) are loaded only by a process whose
 * settings name that service: each costs a process 12–27 MB of memory, and the API's peak RSS has a
 * budget (≤ 200 MB). Checked in a fresh Node process that imports a module through tsx's loader and
 * then lists which of these CommonJS packages Node's module cache holds.
 */
const optionalClients = ['ioredis', 'bullmq', '@eventstore/db-client'] as const;

const probe = `
import { createRequire } from 'node:module';
await import(process.argv[1]);
const cache = Object.keys(createRequire(import.meta.url).cache);
const packages = JSON.parse(process.argv[2]);
console.log(JSON.stringify(packages.filter((name) => cache.some((file) => file.includes('/node_modules/' + name + '/')))));
process.exit(0);
`;

function clientsLoadedBy(modulePath: string): string[] {
  const file = fileURLToPath(new URL(`../${modulePath}`, import.meta.url));
  const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe, file, JSON.stringify(optionalClients)], {
    encoding: 'utf8',
    env: { ...process.env, LOG_LEVEL: 'silent' },
  });
  return JSON.parse(output.trim().split('\n').at(-1) ?? '[]') as string[];
}

describe('optional service clients', () => {
  test('the probe sees a client that a module loads (the Redis request budget loads ioredis)', () => {
    expect(clientsLoadedBy('src/api/rateLimit/redisRequestBudget.ts')).toEqual(['ioredis']);
  });

  test('serving (every role, every route) loads none of them until a setting asks for it', () => {
    expect(clientsLoadedBy('src/main/serve.ts')).toEqual([]);
  });
});
