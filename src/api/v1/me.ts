import { z } from '../../platform/zodOpenApi.js';
import { defineOperation } from './operation.js';

const keyIdentity = z
  .object({
    workspaceId: z.string().openapi({ description: 'The tenant (workspace) the key belongs to.' }),
    environment: z.literal('test').openapi({ description: 'Always `test` in v1. It does not mean sandbox data: the key reads real data.' }),
    scopes: z.array(z.string()).openapi({ description: 'Scopes carried by the key, in colon form (for example `catalog:read`).' }),
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
