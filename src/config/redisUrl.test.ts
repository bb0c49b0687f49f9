import { describe, expect, test } from 'vitest';
import { loadConfig, ConfigError } from './config.js';
import { parseRedisUrl, redactedRedisUrl } from './redisUrl.js';

describe('REDIS_URL', () => {
  test('one server is handed on as written', () => {
    expect(parseRedisUrl('redis://:pw@127.0.0.1:6379/2')).toEqual({ mode: 'standalone', url: 'redis://:pw@127.0.0.1:6379/2' });
    expect(parseRedisUrl('rediss://cache.example.com:6380')).toEqual({ mode: 'standalone', url: 'rediss://cache.example.com:6380' });
  });

  test('Sentinels and a master name: ports default to 26379, the database to 0', () => {
    expect(parseRedisUrl('redis+sentinel://s1:26379,s2:26380,s3/mymaster')).toEqual({
      mode: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26380 },
        { host: 's3', port: 26379 },
      ],
      masterName: 'mymaster',
      db: 0,
    });
  });

  test('credentials of the data nodes in the user information, of the Sentinels in the query; a database after the name', () => {
    expect(parseRedisUrl('redis+sentinel://app:p%40ss@[::1]:26379,10.0.0.2:26379/supply-cache/3?sentinelPassword=s3cret')).toEqual({
      mode: 'sentinel',
      sentinels: [
        { host: '::1', port: 26379 },
        { host: '10.0.0.2', port: 26379 },
      ],
      masterName: 'supply-cache',
      db: 3,
      username: 'app',
      password: 'p@ss',
      sentinelPassword: 's3cret',
    });
    expect(parseRedisUrl('redis+sentinel://:pw@s1/m')).toMatchObject({ password: 'pw' });
    expect(parseRedisUrl('redis+sentinel://:pw@s1/m')).not.toHaveProperty('username');
  });

  test.each([
    ['redis+sentinel://s1:26379', /master name/],
    ['redis+sentinel:///mymaster', /at least one Sentinel/],
    ['redis+sentinel://s1:99999/mymaster', /not a Sentinel address/],
    ['redis+sentinel://s1:26379/my master', /master name/],
    ['redis+sentinel://s1/mymaster/zero', /whole number/],
    ['redis+sentinel://s1/mymaster?password=x', /unknown query parameter "password"/],
    ['rediss+sentinel://s1/mymaster', /TLS through Sentinel is not supported/],
    ['sentinel://s1/mymaster', /must start with redis:\/\/, rediss:\/\/ or redis\+sentinel:\/\//],
    ['redis://', /must be a URL/],
  ])('%s is refused: %s', (value, message) => {
    expect(() => parseRedisUrl(value)).toThrow(message);
  });

  test('a bad value stops start-up with a message naming REDIS_URL', () => {
    expect(() => loadConfig({ REDIS_URL: 'redis+sentinel://s1:26379' })).toThrow(ConfigError);
    expect(() => loadConfig({ REDIS_URL: 'redis+sentinel://s1:26379' })).toThrow(/^Invalid setting REDIS_URL: .*master name/);
    expect(loadConfig({ REDIS_URL: 'redis+sentinel://s1:26379,s2:26379/mymaster' }).redisUrl).toBe('redis+sentinel://s1:26379,s2:26379/mymaster');
  });

  test('passwords never reach a log line', () => {
    expect(redactedRedisUrl('redis+sentinel://app:secret@s1:26379,s2/m?sentinelPassword=other')).toBe('redis+sentinel://app:***@s1:26379,s2/m?sentinelPassword=***');
    expect(redactedRedisUrl('redis://:secret@127.0.0.1:6379')).toBe('redis://:***@127.0.0.1:6379');
    expect(redactedRedisUrl('redis+sentinel://s1,s2/m')).toBe('redis+sentinel://s1,s2/m');
  });
});
