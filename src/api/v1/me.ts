import { storedId } from '../../events/responseFields.js';
import { issuableScopes } from '../../keys/scopes.js';
import { z } from '../../platform/zodOpenApi.js';
import { defineOperation } from './operation.js';

// A key authenticates only while its workspace exists in the read models, whose tenant ids come
// from checked events (1 to 128 characters); a stored key holding a scope no key may hold is
// refused before any operation runs, so `scopes` lists distinct issuable scopes only.
const scopeSchema = z.enum(issuableScopes as [string, ...string[]]);

const keyIdentity = z
  .object({
    workspaceId: storedId.openapi({ description: 'The tenant (workspace) the key belongs to.' }),
    environment: z.literal('test').openapi({ description: 'Always `test` in v1. It does not mean sandbox data: the key reads real data.' }),
    scopes: z
      .array(scopeSchema)
      .max(issuableScopes.length)
      .openapi({ uniqueItems: true, description: 'Scopes carried by the key, in colon form (for example `catalog:read`), each once. New scopes may appear.' }),
  })
  .strict();

export const meOperation = defineOperation({
  operationId: 'getMe',
  method: 'get',
  path: '/v1/me',
  tag: 'Key',
  summary: 'Identity of the API key',
  description: 'The workspace and scopes of the key making the request. Any valid key may call it; use it to verify a new key after rotation. Never contains the key, its hash or any secret.',
  scope: null,
  response: keyIdentity,
  responseName: 'KeyIdentity',
  problems: [],
  handle: async ({ principal }) => ({ workspaceId: principal.tenantId, environment: 'test', scopes: [...principal.scopes] }),
});
