import net from 'node:net';

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

export type TcpProxy = {
  /** The port the proxy listens on (127.0.0.1). */
  readonly port: number;
  /** Listens and forwards (again). */
  start(): Promise<void>;
  /** The server goes away: open connections are reset and new ones refused. */
  stop(): Promise<void>;
  /**
   * A network partition: open connections stay open but nothing more passes either way, and new
   * connections are accepted but never reach the target. `start` (after `heal`) ends it.
   */
  partition(): void;
  /** Ends a partition: the sockets held during it are reset, new connections are forwarded. */
  heal(): void;
  /** Bytes a client sent that the partition swallowed (since the proxy was made). */
  droppedBytes(): number;
  /** The local ports of the proxy's connections to the target (what the target sees as client ports). */
  upstreamPorts(): number[];
};

/**
 * A TCP proxy to a real server (Postgres, Redis) that can be taken down or partitioned and brought
 * back, so that outages can be tried without stopping the shared server.
 */
export function tcpProxy(target: { host: string; port: number }, listenPort: number): TcpProxy {
  const sockets = new Set<net.Socket>();
  const upstreams = new Set<net.Socket>();
  let partitioned = false;
  let dropped = 0;
  let listening = false;
  const server = net.createServer((downstream) => {
    sockets.add(downstream);
    downstream.on('error', () => downstream.destroy());
    downstream.on('close', () => sockets.delete(downstream));
    if (partitioned) {
      // Accepted, answered by no one: what a client sees when the route is gone.
      downstream.on('data', (chunk: Buffer) => (dropped += chunk.length));
      return;
    }
    const upstream = net.connect(target.port, target.host);
    sockets.add(upstream);
    upstreams.add(upstream);
    const end = () => {
      downstream.destroy();
      upstream.destroy();
    };
    upstream.on('error', end);
    upstream.on('close', () => {
      sockets.delete(upstream);
      upstreams.delete(upstream);
      if (!partitioned) end();
    });
    downstream.on('close', () => {
      if (!partitioned) end();
    });
    downstream.on('data', (chunk: Buffer) => {
      if (partitioned) dropped += chunk.length;
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!partitioned) downstream.write(chunk);
    });
  });
  return {
    port: listenPort,
    start: async () => {
      partitioned = false;
      if (listening) return;
      await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve));
      listening = true;
    },
    stop: async () => {
      if (!listening) return;
      listening = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.resetAndDestroy();
      await closed;
    },
    partition: () => {
      partitioned = true;
    },
    droppedBytes: () => dropped,
    upstreamPorts: () => [...upstreams].flatMap((socket) => (socket.localPort === undefined ? [] : [socket.localPort])),
    heal: () => {
      partitioned = false;
      // A connection that lost bytes during the partition cannot carry on; its peers notice at once.
      for (const socket of sockets) socket.resetAndDestroy();
    },
  };
}
