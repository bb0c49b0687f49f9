import { closedPort, tcpProxy } from './tcpProxy.js';
import { testRedisUrl } from './services.js';

export { closedPort };

/** A TCP proxy to the real Redis that can be taken down and brought back, so the shared server is never stopped. */
export function redisProxy(listenPort: number): { url: string; start(): Promise<void>; stop(): Promise<void> } {
  const target = new URL(testRedisUrl);
  const proxy = tcpProxy({ host: target.hostname, port: Number(target.port) }, listenPort);
  return { url: `redis://127.0.0.1:${listenPort}`, start: proxy.start, stop: proxy.stop };
}
