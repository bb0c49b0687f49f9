import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { invalidRequest } from '../../platform/errors.js';

/**
 * Opaque page cursors. A cursor holds only a position (filters are sent again on every page) and
 * is signed with HMAC-SHA256 over the operation, the tenant and the payload, so that a changed
 * cursor, one issued by another operation or one issued to another workspace is refused (400)
 * rather than silently restarting from the first page.
 *
 * Format (may change; clients never parse it): base64url(JSON {v, p}) "." base64url(MAC).
 */
export type CursorCodec = {
  encode(scope: CursorScope, position: string): string;
  /** The position, or a `common.invalid_request` ApiError for any cursor this scope did not issue. */
  decode(scope: CursorScope, cursor: string): string;
};

export type CursorScope = { readonly operationId: string; readonly tenantId: string };

export const maxCursorLength = 1024;

const payloadSchema = z.object({ v: z.literal(1), p: z.string() }).strict();

export function createCursorCodec(secret: string): CursorCodec {
  const mac = (scope: CursorScope, payload: string): Buffer =>
    createHmac('sha256', secret).update(`cursor\n${scope.operationId}\n${scope.tenantId}\n${payload}`).digest();
  return {
    encode(scope, position) {
      const payload = Buffer.from(JSON.stringify({ v: 1, p: position })).toString('base64url');
      return `${payload}.${mac(scope, payload).toString('base64url')}`;
    },
    decode(scope, cursor) {
      const parts = cursor.length <= maxCursorLength ? cursor.split('.') : [];
      const [payload, signature] = parts;
      if (parts.length !== 2 || !payload || !signature || !/^[A-Za-z0-9_-]+$/.test(payload + signature)) throw invalidRequest('cursor');
      // Compared as text: base64url decoding ignores the spare bits of the last character.
      const given = Buffer.from(signature);
      const expected = Buffer.from(mac(scope, payload).toString('base64url'));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidRequest('cursor');
      const decoded = payloadSchema.safeParse(parseJson(Buffer.from(payload, 'base64url').toString('utf8')));
      if (!decoded.success) throw invalidRequest('cursor');
      return decoded.data.p;
    },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
