import { randomBytes, randomUUID } from 'node:crypto';

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Ids for what console actions create: same shape as the seed history's, but truly random. */
export type IdSource = { id(prefix: string): string; eventId(): string };

export const randomIds: IdSource = {
  id: (prefix) => {
    const bytes = randomBytes(14);
    let suffix = '';
    for (const byte of bytes) suffix += base62.charAt(byte % 62);
    return `${prefix}_${suffix}`;
  },
  eventId: () => randomUUID(),
};
