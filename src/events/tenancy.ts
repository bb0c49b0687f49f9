import { z } from 'zod';
import { id } from './primitives.js';

/** Workspace (tenant) lifecycle and members, as the console records them. */
export const tenancyEvents = {
  WorkspaceCreated: z.object({ workspaceId: id, name: z.string().min(1) }).strict(),
  WorkspaceSuspended: z.object({ workspaceId: id, reason: z.string().optional() }).strict(),
  WorkspaceReactivated: z.object({ workspaceId: id }).strict(),

  MemberJoined: z
    .object({
      memberId: id,
      name: z.string().min(1),
      email: z.string().email(),
      role: z.enum(['owner', 'admin', 'purchasing', 'clinician', 'warehouse', 'viewer']),
      permissions: z.array(z.string().min(1)),
      clinicIds: z.array(id),
    })
    .strict(),
  MemberSuspended: z.object({ memberId: id, reason: z.string().optional() }).strict(),
  MemberReactivated: z.object({ memberId: id }).strict(),
  MemberRemoved: z.object({ memberId: id }).strict(),
} as const;
