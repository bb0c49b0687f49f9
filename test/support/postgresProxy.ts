import { tcpProxy, type TcpProxy } from './tcpProxy.js';

/**
 * A TCP proxy, started, to the Postgres server of `databaseUrl`, and the same URL through it: what
 * reaches the database only that way loses it when the proxy stops or partitions, while the shared
 * server runs on.
 */
export async function postgresProxy(databaseUrl: string): Promise<{ readonly proxy: TcpProxy; readonly url: string }> {
  const target = new URL(databaseUrl);
  const proxy = await tcpProxy({ host: target.hostname, port: Number(target.port === '' ? '5432' : target.port) });
  await proxy.start();
  const viaProxy = new URL(databaseUrl);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  return { proxy, url: viaProxy.toString() };
}
