import net from 'node:net';

/** Sockets that hold ports (see refusingPort): kept for the life of the test process. */
const holders: net.Socket[] = [];

/**
 * A local port where nothing listens and nothing can start listening while this process runs:
 * connections to it are refused (ECONNREFUSED). The port is the local end of a connection this
 * process keeps open to itself, so no other process's `listen(0)` can be given it meanwhile.
 */
export async function refusingPort(): Promise<number> {
  const server = net.createServer((accepted) => {
    accepted.on('error', () => accepted.destroy());
    accepted.unref();
    holders.push(accepted);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const holder = net.connect(portOf(server), '127.0.0.1');
  holder.on('error', () => holder.destroy());
  await new Promise<void>((resolve, reject) => holder.once('connect', resolve).once('error', reject));
  server.unref();
  holder.unref();
  holders.push(holder);
  const port = holder.localPort;
  if (port === undefined) throw new Error('no local port');
  return port;
}

/**
 * A port free at this moment, for a child process that must be told which port to bind (a Redis, a
 * Postgres cluster). Another process may take it before the child binds; where nothing should
 * answer, use `refusingPort`.
 */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = portOf(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function portOf(server: net.Server): number {
  const address = server.address();
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
  /** Connections tried while the proxy was down (each reset at once): a client's reconnects, counted. */
  refusedConnections(): number;
};

/**
 * A TCP proxy to a real server (Postgres, Redis) that can be taken down or partitioned and brought
 * back, so that outages can be tried without stopping the shared server. It listens on its own
 * port from the start to the end of the process; while down, it accepts and resets at once every
 * connection, so that nothing else can take the port meanwhile. It starts down.
 */
export async function tcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const upstreams = new Set<net.Socket>();
  let partitioned = false;
  let dropped = 0;
  let forwarding = false;
  let refused = 0;
  const server = net.createServer((downstream) => {
    downstream.on('error', () => downstream.destroy());
    if (!forwarding) {
      // The server is down: the connection ends before a byte passes.
      refused += 1;
      downstream.resetAndDestroy();
      return;
    }
    sockets.add(downstream);
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  return {
    port: portOf(server),
    start: async () => {
      partitioned = false;
      forwarding = true;
    },
    stop: async () => {
      forwarding = false;
      partitioned = false;
      for (const socket of sockets) socket.resetAndDestroy();
    },
    partition: () => {
      partitioned = true;
    },
    droppedBytes: () => dropped,
    refusedConnections: () => refused,
    upstreamPorts: () => [...upstreams].flatMap((socket) => (socket.localPort === undefined ? [] : [socket.localPort])),
    heal: () => {
      partitioned = false;
      // A connection that lost bytes during the partition cannot carry on; its peers notice at once.
      for (const socket of sockets) socket.resetAndDestroy();
    },
  };
}
