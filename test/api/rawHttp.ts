import http from 'node:http';

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
