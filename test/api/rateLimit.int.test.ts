import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, test } from 'vitest';
import { testErrorTypeBase, type ApiResponse } from '../support/apiTestBed.js';
import { useApiBed } from '../support/useApiBed.js';
import { eventually } from '../support/eventually.js';
import { testRedisUrl } from '../support/services.js';
import { loadConfig } from '../../src/config/config.js';
import { composeApi, composeApp } from '../../src/main/apiComposition.js';
import { createLogger } from '../../src/platform/logger.js';
import { createHttpMetrics } from '../../src/api/httpMetrics.js';
import { Registry } from 'prom-client';

const budget = 3;

function rateHeaders(response: ApiResponse): Record<string, string | null> {
  const names = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit', 'ratelimit-policy', 'retry-after'];
  return Object.fromEntries(names.map((name) => [name, response.headers.get(name)]));
}

describe('request budget in memory (no REDIS_URL)', () => {
  const given = useApiBed({ bed: { tenants: 1, rateLimitPerMinute: budget } });

  test('given a budget of 3, when a key makes four requests to different operations, then the headers count down and the fourth is 429 with Retry-After', async () => {
    const { bed, tenant } = given;
    const key = await bed.issueKey(tenant, ['orders:read', 'catalog:read']);
    const answers = [
      await bed.request('/v1/me', { key }),
      await bed.request('/v1/orders?limit=1', { key }),
      await bed.request('/v1/catalog/items/unknown', { key }),
      await bed.request('/v1/catalog/categories', { key }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 404, 429]);
    answers.forEach((answer, index) => {
      const headers = rateHeaders(answer);
      const remaining = Math.max(0, budget - 1 - index);
      const reset = Number(headers['x-ratelimit-reset']);
      expect(reset).toBeGreaterThanOrEqual(1);
      expect(reset).toBeLessThanOrEqual(60);
      expect(headers).toEqual({
        'x-ratelimit-limit': '3',
        'x-ratelimit-remaining': String(remaining),
        'x-ratelimit-reset': String(reset),
        ratelimit: `limit=3, remaining=${remaining}, reset=${reset}`,
        'ratelimit-policy': '3;w=60',
        'retry-after': index === 3 ? expect.stringMatching(/^[1-9]\d*$/) : null,
      });
    });
    expect(answers[3]?.body).toMatchObject({ code: 'common.too_many_requests', status: 429, instance: '/v1/catalog/categories' });
    // Another key has its own budget.
    const other = await bed.issueKey(tenant, ['orders:read']);
    expect((await bed.request('/v1/me', { key: other })).status).toBe(200);
  });

  test('given 401 and 403 answers, then they use no budget and carry no rate-limit headers', async () => {
    const { bed, tenant } = given;
    const key = await bed.issueKey(tenant, ['catalog:read']);
    // A key one character off: the last character always changes (a fixed '0' would leave a key ending in '0' valid).
    const wrongKey = key.slice(0, -1) + (key.endsWith('0') ? '1' : '0');
    for (let i = 0; i < 5; i += 1) {
      const forbidden = await bed.request('/v1/orders', { key });
      expect(forbidden.status).toBe(403);
      expect(Object.values(rateHeaders(forbidden)).every((value) => value === null)).toBe(true);
      const unauthorised = await bed.request('/v1/orders', { headers: { authorization: `Bearer ${wrongKey}` } });
      expect(unauthorised.status).toBe(401);
      expect(Object.values(rateHeaders(unauthorised)).every((value) => value === null)).toBe(true);
    }
    const allowed = await bed.request('/v1/catalog/categories', { key });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('x-ratelimit-remaining')).toBe('2');
  });
});

describe('request budget on Redis (REDIS_URL set)', () => {
  const given = useApiBed({ bed: { tenants: 1, rateLimitPerMinute: budget, redisUrl: testRedisUrl } });
  const redisPrefix = `supply-api:budget`;

  test('given two API processes sharing Redis, when one key spends its budget across both, then the budget is one', async () => {
    const { bed, tenant } = given;
    const key = await bed.issueKey(tenant, ['orders:read']);
    const logger = createLogger('silent');
    const config = loadConfig({ DATABASE_URL: bed.database.url, REDIS_URL: testRedisUrl, RATE_LIMIT_PER_MINUTE: String(budget), ERROR_TYPE_BASE: testErrorTypeBase });
    const registry = new Registry();
    const httpMetrics = createHttpMetrics(registry);
    const second = await composeApi(config, logger, { connectionUri: bed.database.url, kind: 'postgres' }, { serverUrl: 'http://localhost', exports: bed.exports, httpMetrics });
    const server = await new Promise<Server>((resolve) => {
      const listening = composeApp(config, logger, { readiness: async () => ({ ready: true, checks: {} }), registry, httpMetrics, api: second }).listen(0, '127.0.0.1', () => resolve(listening));
    });
    const redis = new Redis(testRedisUrl);
    try {
      expect(second.budget.store).toBe('redis');
      const secondUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      // Given both processes counting through Redis: a process whose first connection attempt has not
      // succeeded yet (slow on a loaded machine) counts per process, by design. A warm-up key of each
      // process shows up in Redis once that process counts there.
      const warmUp = async (send: (warmKey: string) => Promise<unknown>) => {
        const warmKey = await bed.issueKey(tenant, ['orders:read']);
        await eventually(async () => {
          await send(warmKey);
          expect(Number(await redis.get(`${redisPrefix}:${warmKey.slice(0, 12)}`))).toBeGreaterThan(0);
        });
        await redis.del(`${redisPrefix}:${warmKey.slice(0, 12)}`);
      };
      await warmUp((warmKey) => bed.request('/v1/me', { key: warmKey }));
      await warmUp((warmKey) => fetch(`${secondUrl}/v1/me`, { headers: { authorization: `Bearer ${warmKey}` } }));
      const headers = { authorization: `Bearer ${key}` };
      const statuses = await Promise.all([
        bed.request('/v1/me', { key }).then((r) => r.status),
        fetch(`${secondUrl}/v1/me`, { headers }).then((r) => r.status),
        bed.request('/v1/me', { key }).then((r) => r.status),
        fetch(`${secondUrl}/v1/me`, { headers }).then((r) => r.status),
        fetch(`${secondUrl}/v1/me`, { headers }).then((r) => r.status),
      ]);
      expect(statuses.filter((s) => s === 200)).toHaveLength(budget);
      expect(statuses.filter((s) => s === 429)).toHaveLength(5 - budget);
      expect(Number(await redis.get(`${redisPrefix}:${key.slice(0, 12)}`))).toBeGreaterThanOrEqual(budget);
    } finally {
      await redis.del(`${redisPrefix}:${key.slice(0, 12)}`);
      redis.disconnect();
      server.close();
      await second.close();
    }
  });
});

describe('Redis unreachable', () => {
  const given = useApiBed({ bed: { tenants: 1, rateLimitPerMinute: budget, redisUrl: 'redis://user:hunter2@127.0.0.1:1' } });
  test('given REDIS_URL pointing nowhere, when keys read, then the API keeps serving with a per-process budget and logs it', async () => {
    const { bed, tenant } = given;
    const key = await bed.issueKey(tenant, ['orders:read']);
    const statuses = [];
    for (let i = 0; i < budget + 1; i += 1) statuses.push((await bed.request('/v1/me', { key, headers: { 'x-request-id': randomUUID() } })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const warnings = bed.logs.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((line) => line.level === 40);
    // The warning names the setting and where it points, without its password.
    expect(warnings.map((line) => line.msg).join('\n')).toContain('unreachable at REDIS_URL=redis://user:***@127.0.0.1:1');
    expect(bed.logs.join('')).not.toContain('hunter2');
  });
});
