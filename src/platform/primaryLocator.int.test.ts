import { describe, expect, test } from 'vitest';
import { refusingPort } from '../../test/support/tcpProxy.js';
import { services, testPostgresAdminUrl } from '../../test/support/services.js';
import { isDatabaseUnreachable, NoPrimaryError, primaryLocator } from './primaryLocator.js';

describe('isDatabaseUnreachable', () => {
  test('connection failures, shutdowns, read-only servers and no primary are; an error of the statement is not', () => {
    expect(isDatabaseUnreachable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDatabaseUnreachable(new Error('wrapped', { cause: Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }) }))).toBe(true);
    expect(isDatabaseUnreachable(Object.assign(new Error('cannot execute UPDATE in a read-only transaction'), { code: '25006' }))).toBe(true);
    expect(isDatabaseUnreachable(new NoPrimaryError(['a:5432'], ['a:5432 is a standby']))).toBe(true);
    expect(isDatabaseUnreachable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseUnreachable(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isDatabaseUnreachable(new Error('boom'))).toBe(false);
  });
});

describe.runIf(services.postgres)('the primary of a multi-host URL', () => {
  test('is the first host that answers as a primary; a host that refuses is passed over, and after a failure it is looked for again', async () => {
    const admin = new URL(testPostgresAdminUrl);
    const down = await refusingPort();
    const url = `postgres://${admin.username}@127.0.0.1:${down},${admin.hostname}:${admin.port || '5432'}/postgres`;
    const locator = primaryLocator(url);
    expect(locator.multiHost).toBe(true);
    const found = await locator.locate();
    expect(new URL(found).port).toBe(admin.port || '5432');
    expect(locator.current()).toBe(found);
    locator.suspect(found);
    expect(locator.current()).toBeUndefined();
    expect(await locator.locate()).toBe(found);
  });

  test('none answering as a primary: NoPrimaryError naming each host and why', async () => {
    const [a, b] = [await refusingPort(), await refusingPort()];
    const locator = primaryLocator(`postgres://app@127.0.0.1:${a},127.0.0.1:${b}/supply`);
    await expect(locator.locate()).rejects.toThrow(NoPrimaryError);
    await expect(locator.locate()).rejects.toThrow(new RegExp(`no primary among 127\\.0\\.0\\.1:${a}, 127\\.0\\.0\\.1:${b}`));
  });

  test('one server is its own primary: nothing is asked', async () => {
    const locator = primaryLocator('postgres://app@127.0.0.1:1/supply');
    expect(locator.multiHost).toBe(false);
    expect(await locator.locate()).toBe('postgres://app@127.0.0.1:1/supply');
  });
});
