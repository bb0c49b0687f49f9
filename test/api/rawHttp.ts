import http from 'node:http';
import net from 'node:net';

/**
 * A plain node:http client for requests `fetch` would change or refuse: the path is sent exactly as
 * given (no dot-segment removal, no re-encoding of `%` garbage), and header values may carry any
 * Latin-1 byte HTTP allows (tab, 0x20-0x7E, obs-text 0x80-0xFF).
 */
export type RawResponse = {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  /** The parsed JSON body; undefined when the body is empty or not JSON. */
  readonly body: unknown;
};

export type RawRequest = {
  readonly method?: string;
  /** Sent as is: path and query string, already encoded. */
  readonly path: string;
  readonly headers?: http.OutgoingHttpHeaders;
  readonly body?: Buffer;
};

export type RawClient = {
  send(request: RawRequest): Promise<RawResponse>;
  close(): void;
};

/** Header values node:http refuses to send: control characters other than tab, and anything above 0xFF. */
export const headerUnsafe = /[^\t\x20-\x7e\x80-\xff]/g;

/** Text as the bytes of its UTF-8 encoding, one Latin-1 character per byte, stripped of what HTTP forbids in a header. */
export function asHeaderValue(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1').replace(headerUnsafe, '');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function createRawClient(baseUrl: string): RawClient {
  const { hostname, port } = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  return {
    send: (request) =>
      new Promise<RawResponse>((resolve, reject) => {
        const body = request.body;
        const outgoing = http.request(
          {
            host: hostname,
            port,
            method: request.method ?? 'GET',
            path: request.path,
            // With a body, its length is always declared (node:http would not frame a GET body otherwise).
            headers: { ...request.headers, ...(body === undefined ? {} : { 'content-length': String(body.length) }) },
            // A request whose body the server does not read must not leave that body on a shared connection.
            agent: body === undefined ? agent : false,
          },
          (incoming) => {
            const chunks: Buffer[] = [];
            incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
            incoming.on('error', reject);
            incoming.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, text, body: text === '' ? undefined : parseJson(text) });
            });
          },
        );
        outgoing.on('error', reject);
        outgoing.end(body);
      }),
    close: () => agent.destroy(),
  };
}

/** One HTTP answer as read off a socket: status, headers (names lower-cased) and the body its Content-Length frames. */
export type SocketAnswer = { readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: string };

/**
 * A bare TCP connection for what no HTTP client lets a test do: send headers and hold the body
 * back, stream a body that never ends, watch for an interim `100 Continue`. Everything is decided
 * by what arrives, never by time.
 */
export type RawConnection = {
  /** Writes and resolves once the bytes are handed to the kernel; rejects once the server has closed. */
  write(data: string | Buffer): Promise<void>;
  /** The next answer (interim ones included), once it has arrived whole. */
  nextAnswer(): Promise<SocketAnswer>;
  /** Resolves once the server has ended or reset the connection. */
  readonly closed: Promise<void>;
  /** Whether the connection has closed. */
  isClosed(): boolean;
  destroy(): void;
};

export function openConnection(baseUrl: string): Promise<RawConnection> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let buffer = Buffer.alloc(0);
    let closed = false;
    let closedResolve: () => void = () => undefined;
    const closedPromise = new Promise<void>((done) => (closedResolve = done));
    const waiting: (() => void)[] = [];
    const wake = () => {
      for (const waiter of waiting.splice(0)) waiter();
    };
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      wake();
    });
    const onClosed = () => {
      closed = true;
      closedResolve();
      wake();
    };
    socket.on('end', onClosed);
    socket.on('close', onClosed);
    socket.on('error', onClosed);
    /** The first whole answer in the buffer, taken out of it; undefined while it is incomplete. */
    const takeAnswer = (): SocketAnswer | undefined => {
      const headEnd = buffer.indexOf('\r\n\r\n');
      if (headEnd === -1) return undefined;
      const [statusLine = '', ...lines] = buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      const length = Number(headers['content-length'] ?? 0);
      if (buffer.length < headEnd + 4 + length) return undefined;
      const body = buffer.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
      buffer = buffer.subarray(headEnd + 4 + length);
      return { status: Number(statusLine.split(' ')[1]), headers, body };
    };
    socket.once('connect', () =>
      resolve({
        write: (data) =>
          new Promise<void>((written, failed) => {
            if (closed) {
              failed(new Error('the connection is closed'));
              return;
            }
            socket.write(data, (error) => (error ? failed(error) : written()));
          }),
        nextAnswer: () =>
          new Promise<SocketAnswer>((answered, failed) => {
            const attempt = () => {
              const answer = takeAnswer();
              if (answer !== undefined) answered(answer);
              else if (closed) failed(new Error(`the connection closed without a whole answer; received ${JSON.stringify(buffer.toString('latin1').slice(0, 200))}`));
              else waiting.push(attempt);
            };
            attempt();
          }),
        closed: closedPromise,
        isClosed: () => closed,
        destroy: () => socket.destroy(),
      }),
    );
    socket.once('error', reject);
  });
}
