import { createLogger, type Logger } from '../../src/platform/logger.js';

export const logLevels = { error: 50, warn: 40, info: 30 } as const;

export type LogLine = { readonly level: number; readonly msg: string; readonly [field: string]: unknown };

/** A debug-level logger whose lines are kept, parsed, for assertions. */
export function capturingLogger<Line extends LogLine = LogLine>(): { logger: Logger; lines: Line[]; at(level: number): Line[] } {
  const lines: Line[] = [];
  const logger = createLogger('debug', {
    write: (line: string) => {
      lines.push(JSON.parse(line) as Line);
    },
  });
  return { logger, lines, at: (level) => lines.filter((line) => line.level === level) };
}
