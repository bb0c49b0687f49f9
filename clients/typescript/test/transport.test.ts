import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NetworkError, reachingFetch } from '../src/transport.js';

/** A server that answers every request but the `dropped`-th, whose connection it closes unanswered. */
async function serverDropping(dropped: readonly number[]): Promise<{ server: Server; url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((socket) => {
    socket.on('data', () => {
      requests += 1;
      if (dropped.includes(requests)) socket.destroy();
      else socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, url: `http://127.0.0.1:${address.port}/v1/me`, requests: () => requests };
}

const send = reachingFetch((request) => fetch(request));

describe('requests whose connection closes before an answer', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it('given a GET on a connection the server closes, then it is sent once more and answered', async () => {
    const bed = await serverDropping([2]);
    server = bed.server;
    await (await send(new Request(bed.url))).text();
    const response = await send(new Request(bed.url));
    expect(await response.text()).toBe('ok');
    expect(bed.requests()).toBe(3);
  });

  it('given a GET whose second try is closed too, then NetworkError, after two tries', async () => {
    const bed = await serverDropping([1, 2]);
    server = bed.server;
    await expect(send(new Request(bed.url))).rejects.toBeInstanceOf(NetworkError);
    expect(bed.requests()).toBe(2);
  });

  it('given a POST on a connection the server closes, then NetworkError, sent once', async () => {
    const bed = await serverDropping([1]);
    server = bed.server;
    await expect(send(new Request(bed.url, { method: 'POST', body: '{}' }))).rejects.toBeInstanceOf(NetworkError);
    expect(bed.requests()).toBe(1);
  });
});
