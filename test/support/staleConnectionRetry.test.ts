import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchRetryingStaleConnection } from './staleConnectionRetry.js';

/** A server that answers every request but the `dropped`-th, whose socket it closes unanswered. */
async function serverDropping(dropped: number): Promise<{ server: Server; url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((socket) => {
    socket.on('data', () => {
      requests += 1;
      if (requests === dropped) socket.destroy();
      else socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, url: `http://127.0.0.1:${address.port}/`, requests: () => requests };
}

describe('fetch retrying a connection the server closed', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it('given a GET whose connection is closed before an answer, then it is sent once more and answered', async () => {
    const bed = await serverDropping(2);
    server = bed.server;
    await (await fetch(bed.url)).text();
    const response = await fetchRetryingStaleConnection(bed.url);
    expect(await response.text()).toBe('ok');
    expect(bed.requests()).toBe(3);
  });

  it('given a POST whose connection is closed before an answer, then the failure is thrown, not sent twice', async () => {
    const bed = await serverDropping(2);
    server = bed.server;
    await (await fetch(bed.url)).text();
    await expect(fetchRetryingStaleConnection(bed.url, { method: 'POST', body: 'x' })).rejects.toThrow(TypeError);
    expect(bed.requests()).toBe(2);
  });
});
