import net from 'node:net';
import { testRedisUrl } from './services.js';

/** A local port nothing listens on (bound then released). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') {
    throw new Error('no TCP address');
  }
  return address.port;
}

/** A TCP proxy to the real Redis that can be taken down and brought back, so the shared server is never stopped. */
export function redisProxy(listenPort: number): { url: string; start(): Promise<void>; stop(): Promise<void> } {
  const target = new URL(testRedisUrl);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((downstream) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(downstream);
    sockets.add(upstream);
    const end = () => {
      downstream.destroy();
      upstream.destroy();
      sockets.delete(downstream);
      sockets.delete(upstream);
    };
    for (const socket of [downstream, upstream]) {
      socket.on('error', end);
      socket.on('close', end);
    }
    downstream.pipe(upstream);
    upstream.pipe(downstream);
  });
  return {
    url: `redis://127.0.0.1:${listenPort}`,
    start: () => new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve)),
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) {
        socket.destroy();
      }
      await closed;
    },
  };
}
