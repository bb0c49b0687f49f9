import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** Paths whose values never reach a log line: credentials and keys. */
export const redactedPaths = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'request.headers.authorization',
  'key',
  'apiKey',
  '*.key',
  '*.apiKey',
  'password',
  '*.password',
  'signingSecret',
  '*.signingSecret',
];

/** JSON logs on stderr (stdout is reserved for the one JSON document a command prints). */
export function createLogger(level: string, destination: DestinationStream = pino.destination(2)): Logger {
  return pino(
    {
      level,
      base: { service: 'supply-api' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: redactedPaths, censor: '[redacted]' },
    },
    destination,
  );
}
