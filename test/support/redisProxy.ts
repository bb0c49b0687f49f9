import { tcpProxy, type TcpProxy } from './tcpProxy.js';
import { testRedisUrl } from './services.js';

export { refusingPort } from './tcpProxy.js';

/** tcpProxy's controls, with the proxy's address as a Redis URL. */
export type RedisProxy = Pick<TcpProxy, 'start' | 'stop' | 'partition' | 'heal' | 'refusedConnections'> & { readonly url: string };

/** A TCP proxy to the real Redis that can be taken down and brought back, so the shared server is never stopped. It starts down. */
export async function redisProxy(): Promise<RedisProxy> {
  const target = new URL(testRedisUrl);
  const proxy = await tcpProxy({ host: target.hostname, port: Number(target.port) });
  return { url: `redis://127.0.0.1:${proxy.port}`, start: proxy.start, stop: proxy.stop, partition: proxy.partition, heal: proxy.heal, refusedConnections: proxy.refusedConnections };
}
