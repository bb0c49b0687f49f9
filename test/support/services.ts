import net from 'node:net';

export const testPostgresAdminUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const testRedisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export function isReachable(url: string, timeoutMs = 1500): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Set by the global set-up: whether real services can be used by this run. */
export const services = {
  postgres: process.env.TEST_SERVICE_POSTGRES === '1',
  redis: process.env.TEST_SERVICE_REDIS === '1',
  eventStoreDb: process.env.EVENTSTORE_URL !== undefined && process.env.EVENTSTORE_URL !== '',
};
