import { z } from 'zod';

export const tenantStatus = z.enum(['active', 'suspended']);
export type TenantStatus = z.infer<typeof tenantStatus>;

export const memberStatus = z.enum(['active', 'suspended', 'removed']);
export type MemberStatus = z.infer<typeof memberStatus>;

/** Whether a tenant's keys may read at all. */
export const tenantStatusRow = z.object({ status: tenantStatus }).strict();
export type TenantStatusRow = z.infer<typeof tenantStatusRow>;

/**
 * What authentication needs of the member a key was created for. `lastDeactivatedAt` (absent if
 * never suspended or removed): a key created at or before it stays refused, even after the member
 * is reactivated.
 */
export const memberAccessRow = z
  .object({
    status: memberStatus,
    permissions: z.array(z.string()),
    lastDeactivatedAt: z.string().optional(),
  })
  .strict();
export type MemberAccessRow = z.infer<typeof memberAccessRow>;

