import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { parsePostgresUrl, parseReadDatabaseUrls } from './postgresUrl.js';

describe('PostgreSQL URLs (DATABASE_URL, READ_DATABASE_URL)', () => {
  test('one server is handed on as written', () => {
    expect(parsePostgresUrl('postgres://app:pw@db.example.com:6432/supply?sslmode=require')).toEqual({
      hosts: [{ host: 'db.example.com', port: 6432 }],
      urls: ['postgres://app:pw@db.example.com:6432/supply?sslmode=require'],
    });
    expect(parsePostgresUrl('postgresql://app@db/supply').hosts).toEqual([{ host: 'db', port: 5432 }]);
  });

  test("libpq's multi-host form: one URL per host, with the same credentials, database and parameters; ports default to 5432", () => {
    expect(parsePostgresUrl('postgres://app:p%40ss@pg1:5433,pg2,[::1]:5434/supply?sslmode=require')).toEqual({
      hosts: [
        { host: 'pg1', port: 5433 },
        { host: 'pg2', port: 5432 },
        { host: '::1', port: 5434 },
      ],
      urls: [
        'postgres://app:p%40ss@pg1:5433/supply?sslmode=require',
        'postgres://app:p%40ss@pg2:5432/supply?sslmode=require',
        'postgres://app:p%40ss@[::1]:5434/supply?sslmode=require',
      ],
    });
  });

  test.each([
    ['mysql://localhost/db', /postgres:\/\//],
    ['postgres://pg1:5432,:5432/db', /is not a host\[:port\]/],
    ['postgres://pg1:5432,pg2:99999/db', /is not a host\[:port\]/],
  ])('%s is refused: %s', (value, message) => {
    expect(() => parsePostgresUrl(value)).toThrow(message);
  });

  test('a refusal never shows the password', () => {
    expect(() => parsePostgresUrl('postgres://app:secret@pg1,pg2:x/db')).toThrow(/^(?!.*secret)/s);
  });

  test('READ_DATABASE_URL: URLs separated by commas, each of one or several servers; each server named once', () => {
    expect(parseReadDatabaseUrls('postgres://app@pg1:5432,pg2:5432,pg3:5432/supply')).toEqual([
      'postgres://app@pg1:5432/supply',
      'postgres://app@pg2:5432/supply',
      'postgres://app@pg3:5432/supply',
    ]);
    expect(parseReadDatabaseUrls('postgres://app@s1/db, postgresql://app@s2:5433/db,postgres://app@s1/db,')).toEqual(['postgres://app@s1/db', 'postgresql://app@s2:5433/db']);
    expect(() => parseReadDatabaseUrls('postgres://s1/db,mysql://s2/db')).toThrow(/postgres:\/\//);
  });

  test('the settings accept the multi-host form; DATABASE_URL is kept as written, READ_DATABASE_URL becomes one URL per server', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://app@pg1:5432,pg2:5432,pg3:5432/supply',
      READ_DATABASE_URL: 'postgres://app@pg1:5432,pg2:5432,pg3:5432/supply',
    });
    expect(config.databaseUrl).toBe('postgres://app@pg1:5432,pg2:5432,pg3:5432/supply');
    expect(config.readDatabaseUrls).toEqual(['postgres://app@pg1:5432/supply', 'postgres://app@pg2:5432/supply', 'postgres://app@pg3:5432/supply']);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://app@pg1,/supply' })).toThrow(ConfigError);
  });
});
