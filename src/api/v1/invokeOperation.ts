import type { AnalyticsCaps } from '../../config/analyticsCaps.js';
import type { ExportService } from '../../exports/exportService.js';
import type { Clock } from '../../platform/clock.js';
import type { CursorCodec } from '../pagination/cursorCodec.js';
import type { Operation, OperationContext } from './operation.js';

/** What every operation runs with, whoever calls it (an API key on /v1, a signed-in member on /mcp). */
export type OperationServices = {
  readonly cursors: CursorCodec;
  readonly clock: Clock;
  readonly analyticsCaps: AnalyticsCaps;
  readonly exports: ExportService;
};

/** Who calls, on which connection and reader (and read guard, for guarded reads), in which language. */
export type OperationCall = Pick<OperationContext, 'principal' | 'db' | 'primary' | 'reads' | 'readGuard' | 'language' | 'requestId'>;

/**
 * Runs one operation for an authenticated principal with parsed input. The caller has already
 * checked the principal's scopes and spent its request budget.
 */
export function invokeOperation(
  services: OperationServices,
  operation: Operation,
  call: OperationCall,
  input: { query: Record<string, unknown>; params: Record<string, unknown>; body: Record<string, unknown> },
): Promise<unknown> {
  return operation.handle(
    {
      ...call,
      cursors: services.cursors,
      operationId: operation.operationId,
      clock: services.clock,
      analyticsCaps: services.analyticsCaps,
      exports: services.exports,
    },
    input,
  );
}
