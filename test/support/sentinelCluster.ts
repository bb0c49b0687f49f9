import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { RedisAddress } from '../../src/config/redisUrl.js';
import { freePort } from './tcpProxy.js';
import { onPath } from './onPath.js';
import { waitFor as pollFor } from './waitFor.js';

/**
 * Sentinel's timings for the set-ups of the tests and the drill. The master is declared down after
 * 5 s without an answer: short enough for a test, long enough that a process starved of CPU for a
 * moment on a busy 2-core machine is not taken for dead (a spurious failover). failover-timeout
 * bounds one attempt and the pause before a failed one is tried again.
 */
export const sentinelTimings = { downAfterMs: 5000, failoverTimeoutMs: 15_000 } as const;

export type SentinelSwitch = { readonly at: number; readonly from: RedisAddress; readonly to: RedisAddress };

export type SentinelCluster = {
  /** `redis+sentinel://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3/<masterName>`: the REDIS_URL of the service. */
  readonly url: string;
  readonly masterName: string;
  readonly sentinels: readonly RedisAddress[];
  readonly timings: typeof sentinelTimings;
  /** Every +switch-master a Sentinel announced so far (`at`: performance.now()). */
  readonly switches: readonly SentinelSwitch[];
  /** The master the Sentinels name now. */
  master(): Promise<RedisAddress>;
  /** A plain client of the current master (the caller quits it). */
  masterClient(): Promise<Redis>;
  /** Waits until every write the master has taken so far is on its replica (a write of our own, then WAIT). */
  replicated(timeoutMs?: number): Promise<void>;
  /** SIGKILLs the master's process; `at` is performance.now() just before the signal. */
  killMaster(): Promise<{ readonly killed: RedisAddress; readonly at: number }>;
  /** Waits for the Sentinels to promote a replica in place of `from` and for it to answer ROLE master. */
  promotion(from: RedisAddress, timeoutMs?: number): Promise<SentinelSwitch>;
  /** SIGSTOPs the replicas (a replica that stops answering, e.g. a stalled machine) until `resume`. */
  freezeReplicas(): Promise<{ resume(): Promise<void> }>;
  /** Starts the killed node again, as a replica of the current master, and waits until it is in sync. */
  restartKilled(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
};

const redisServer = 'redis-server';
const redisSentinel = 'redis-sentinel';

/** Why a Sentinel set-up cannot be started here (Debian's redis-server and redis-sentinel), or undefined. */
export function sentinelClusterUnavailable(): string | undefined {
  const missing = [redisServer, redisSentinel].filter((name) => onPath(name) === undefined);
  return missing.length === 0 ? undefined : `${missing.join(' and ')} not found on PATH (Debian packages redis-server and redis-sentinel)`;
}


type Node = { readonly name: string; readonly port: number; readonly dir: string; child?: ChildProcess; output: string };

/**
 * A Redis master, one replica and three Sentinels (quorum 2) of our own, on free loopback ports in a
 * temporary folder, without persistence. Resolves once every Sentinel knows the replica and the two
 * other Sentinels, so that a failover can start as soon as the master is gone.
 */
export async function startSentinelCluster(options: { masterName?: string; log?: (line: string) => void } = {}): Promise<SentinelCluster> {
  const unavailable = sentinelClusterUnavailable();
  if (unavailable !== undefined) throw new Error(`cannot start a Sentinel set-up: ${unavailable}`);
  const log = options.log ?? (() => undefined);
  const masterName = options.masterName ?? 'supply';
  const timings = sentinelTimings;
  const folder = await mkdtemp(path.join(os.tmpdir(), 'supply-sentinel-'));
  const nodes: Node[] = [];
  const sentinelNodes: Node[] = [];
  const clients = new Set<Redis>();
  const switches: SentinelSwitch[] = [];
  const client = (address: RedisAddress): Redis => {
    const redis = new Redis({ host: address.host, port: address.port, maxRetriesPerRequest: 1, retryStrategy: () => null, lazyConnect: false });
    redis.on('error', () => undefined);
    clients.add(redis);
    redis.once('end', () => clients.delete(redis));
    return redis;
  };
  const withClient = async <T>(address: RedisAddress, use: (redis: Redis) => Promise<T>): Promise<T> => {
    const redis = client(address);
    try {
      return await use(redis);
    } finally {
      redis.disconnect();
    }
  };
  const at = (port: number): RedisAddress => ({ host: '127.0.0.1', port });

  const launch = async (node: Node, command: string, args: readonly string[]): Promise<void> => {
    const child = spawn(command, args, { cwd: node.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    node.child = child;
    const append = (chunk: Buffer): void => void (node.output += chunk.toString());
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    await waitFor(`${node.name} on port ${node.port} to answer PING`, 20_000, async () => {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${node.name} exited: ${node.output.slice(-2000)}`);
      return withClient(at(node.port), async (redis) => (await redis.ping()) === 'PONG').catch(() => false);
    });
  };
  const serverArgs = (node: Node, replicaOf?: RedisAddress): string[] => [
    '--port', String(node.port), '--bind', '127.0.0.1', '--dir', node.dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no',
    '--logfile', '', '--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0',
    ...(replicaOf === undefined ? [] : ['--replicaof', replicaOf.host, String(replicaOf.port)]),
  ];
  const newNode = async (name: string): Promise<Node> => {
    const dir = path.join(folder, name);
    await mkdir(dir);
    return { name, port: await freePort(), dir, output: '' };
  };

  const close = async (): Promise<void> => {
    for (const redis of [...clients]) redis.disconnect();
    await Promise.all([...sentinelNodes, ...nodes].map((node) => stopChild(node.child)));
    await rm(folder, { recursive: true, force: true });
  };

  try {
    const master = await newNode('node1');
    const replica = await newNode('node2');
    nodes.push(master, replica);
    await launch(master, redisServer, serverArgs(master));
    await launch(replica, redisServer, serverArgs(replica, at(master.port)));
    for (let index = 1; index <= 3; index += 1) {
      const sentinel = await newNode(`sentinel${index}`);
      sentinelNodes.push(sentinel);
      const file = path.join(sentinel.dir, 'sentinel.conf');
      await writeFile(
        file,
        [
          `port ${sentinel.port}`,
          'bind 127.0.0.1',
          'daemonize no',
          'logfile ""',
          `dir ${sentinel.dir}`,
          `sentinel monitor ${masterName} 127.0.0.1 ${master.port} 2`,
          `sentinel down-after-milliseconds ${masterName} ${timings.downAfterMs}`,
          `sentinel failover-timeout ${masterName} ${timings.failoverTimeoutMs}`,
          `sentinel parallel-syncs ${masterName} 1`,
          '',
        ].join('\n'),
      );
      await launch(sentinel, redisSentinel, [file]);
    }
    const sentinels = sentinelNodes.map((node) => at(node.port));
    log(`master :${master.port}, replica :${replica.port}, sentinels ${sentinels.map((s) => `:${s.port}`).join(' ')}`);

    // Each Sentinel must know the replica (from the master's INFO) and the two others (hello messages).
    await waitFor('every Sentinel to know the replica and the two other Sentinels', 30_000, async () => {
      const states = await Promise.all(
        sentinels.map((address) =>
          withClient(address, async (redis) => fieldsOf(await redis.call('SENTINEL', 'MASTER', masterName))).catch(() => undefined),
        ),
      );
      return states.every((state) => state !== undefined && Number(state['num-slaves']) >= 1 && Number(state['num-other-sentinels']) >= 2);
    });
    await waitFor('the replica to be in sync', 20_000, async () => {
      const info = await withClient(at(replica.port), (redis) => redis.info('replication')).catch(() => '');
      return /master_link_status:up/.test(info);
    });

    // One subscriber per Sentinel: the first to announce a switch dates it.
    for (const address of sentinels) {
      const subscriber = new Redis({ host: address.host, port: address.port, maxRetriesPerRequest: null, retryStrategy: (times) => Math.min(times * 100, 1000) });
      subscriber.on('error', () => undefined);
      clients.add(subscriber);
      subscriber.on('message', (_channel: string, message: string) => {
        // "<name> <old ip> <old port> <new ip> <new port>"
        const [name, fromHost, fromPort, toHost, toPort] = message.split(' ');
        if (name !== masterName || fromHost === undefined || toHost === undefined) return;
        const from = { host: fromHost, port: Number(fromPort) };
        const to = { host: toHost, port: Number(toPort) };
        if (!switches.some((known) => sameAddress(known.from, from) && sameAddress(known.to, to))) switches.push({ at: performance.now(), from, to });
      });
      await subscriber.subscribe('+switch-master');
    }

    const currentMaster = async (): Promise<RedisAddress> => {
      for (const address of sentinels) {
        const answer = await withClient(address, (redis) => redis.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName)).catch(() => undefined);
        if (Array.isArray(answer) && typeof answer[0] === 'string') return { host: answer[0], port: Number(answer[1]) };
      }
      throw new Error('no Sentinel names a master');
    };
    const roleOf = (address: RedisAddress): Promise<string | undefined> =>
      withClient(address, async (redis) => {
        const role = await redis.call('ROLE');
        return Array.isArray(role) && typeof role[0] === 'string' ? role[0] : undefined;
      }).catch(() => undefined);
    let killed: Node | undefined;

    return {
      url: `redis+sentinel://${sentinels.map((s) => `${s.host}:${s.port}`).join(',')}/${masterName}`,
      masterName,
      sentinels,
      timings,
      switches,
      master: currentMaster,
      masterClient: async () => {
        const address = await currentMaster();
        const redis = new Redis({ host: address.host, port: address.port, maxRetriesPerRequest: 1 });
        redis.on('error', () => undefined);
        return redis;
      },
      replicated: async (timeoutMs = 10_000) => {
        await withClient(await currentMaster(), async (redis) => {
          await redis.set('supply-test:replicated', String(Date.now()));
          const acknowledged = await redis.wait(1, timeoutMs);
          if (acknowledged < 1) throw new Error(`no replica acknowledged the master's writes within ${timeoutMs} ms`);
        });
      },
      killMaster: async () => {
        const address = await currentMaster();
        const node = nodes.find((candidate) => candidate.port === address.port && candidate.child !== undefined && candidate.child.exitCode === null);
        if (node?.child === undefined) throw new Error(`the master :${address.port} is not one of our nodes`);
        const exited = new Promise<void>((resolve) => node.child?.once('exit', () => resolve()));
        const killedAt = performance.now();
        node.child.kill('SIGKILL');
        await exited;
        killed = node;
        log(`SIGKILLed the master :${address.port}`);
        return { killed: address, at: killedAt };
      },
      promotion: async (from, timeoutMs = timings.downAfterMs + timings.failoverTimeoutMs + 15_000) => {
        let found: SentinelSwitch | undefined;
        await waitFor(`a replica promoted in place of :${from.port}`, timeoutMs, async () => {
          found = switches.find((entry) => sameAddress(entry.from, from));
          return found !== undefined && (await roleOf(found.to)) === 'master';
        });
        if (found === undefined) throw new Error('unreachable');
        log(`promoted :${found.to.port}`);
        return found;
      },
      freezeReplicas: async () => {
        const master = await currentMaster();
        const frozen = nodes.filter((node) => node.port !== master.port && node.child !== undefined && node.child.exitCode === null && node.child.signalCode === null);
        for (const node of frozen) node.child?.kill('SIGSTOP');
        return {
          resume: async () => {
            for (const node of frozen) node.child?.kill('SIGCONT');
            await waitFor('the replicas to answer again', 10_000, async () =>
              (await Promise.all(frozen.map((node) => withClient(at(node.port), async (redis) => (await redis.ping()) === 'PONG').catch(() => false)))).every(Boolean),
            );
          },
        };
      },
      restartKilled: async (timeoutMs = 30_000) => {
        const node = killed;
        if (node === undefined) throw new Error('no node was killed');
        const current = await currentMaster();
        await launch(node, redisServer, serverArgs(node, current));
        killed = undefined;
        await waitFor(`:${node.port} to be in sync with :${current.port}`, timeoutMs, async () => {
          const info = await withClient(at(node.port), (redis) => redis.info('replication')).catch(() => '');
          return /master_link_status:up/.test(info) && info.includes(`master_port:${current.port}`);
        });
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

function sameAddress(a: RedisAddress, b: RedisAddress): boolean {
  return a.host === b.host && a.port === b.port;
}

/** SENTINEL MASTER answers a flat list of names and values. */
function fieldsOf(reply: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  if (!Array.isArray(reply)) return fields;
  for (let index = 0; index + 1 < reply.length; index += 2) {
    const [name, value] = [reply[index], reply[index + 1]];
    if (typeof name === 'string' && typeof value === 'string') fields[name] = value;
  }
  return fields;
}

/** The clusters' poll (test/support/waitFor.ts) every 50 ms: Sentinel's steps are quick. */
function waitFor(what: string, timeoutMs: number, condition: () => Promise<boolean>): Promise<void> {
  return pollFor(what, timeoutMs, condition, 50);
}

async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
