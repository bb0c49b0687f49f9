import net from 'node:net';
import { describe, expect, test } from 'vitest';
import { checkPortFree } from './portCheck.js';
import { namingSetting, redactedUrl, StartupError } from './startupErrors.js';

describe('start-up errors name what to change', () => {
  test('a URL is shown without its password or credentials in its query', () => {
    expect(redactedUrl('postgres://app:s3cret@db.internal:5432/supply?sslmode=require&password=x')).toBe('postgres://app:***@db.internal:5432/supply?sslmode=require&password=***');
    expect(redactedUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(redactedUrl('not a url')).toBe('(not a URL)');
  });

  test('a failed first contact names the setting, where it points and why', async () => {
    const failing = namingSetting('REDIS_URL', 'Redis', 'redis://:pw@127.0.0.1:1', () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:1', { cause: new Error('ECONNREFUSED') })));
    await expect(failing).rejects.toThrow(new StartupError('cannot use Redis at REDIS_URL=redis://:***@127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1'));
  });

  test("libpq's multi-host form is shown with its hosts, without the password", () => {
    expect(redactedUrl('postgres://app:s3cret@pg1:5432,pg2:5432/supply?sslmode=require&password=x')).toBe('postgres://app:***@pg1:5432,pg2:5432/supply?sslmode=require&password=***');
    expect(redactedUrl('postgres://app@pg1,pg2/supply')).toBe('postgres://app@pg1,pg2/supply');
  });

  test('a busy port fails at once, naming the port, who holds it when known, and --port and PORT', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      await expect(checkPortFree(port)).rejects.toThrow(`port ${port} is already in use by another process: stop it, or choose another port with --port N or PORT=N`);
      await expect(checkPortFree(port, async () => 'process 42 (the supply-api serving DATA_DIR /srv/data)')).rejects.toThrow(`port ${port} is already in use by process 42 (the supply-api serving DATA_DIR /srv/data)`);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
    await expect(checkPortFree(port)).resolves.toBeUndefined();
    await expect(checkPortFree(0)).resolves.toBeUndefined();
  });
});
