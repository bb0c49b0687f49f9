import type { EventType } from './catalogue.js';

/** What an upcaster may read of the stored event besides its data. */
export type UpcastContext = { readonly occurredAt: string };

/**
 * Turns the data of one version of an event type into the next version's. Pure and total over
 * what that version's schema allowed: the same stored event always gives the same data, so rebuilds
 * and evidence recomputed years later agree with what was served.
 */
export type Upcaster = (data: Readonly<Record<string, unknown>>, event: UpcastContext) => Readonly<Record<string, unknown>>;

/**
 * The field renamed, in its place among the others (the key order of the data as written). Data
 * without the field is returned as it is (never changed: upcasters copy what they change), so a
 * replay hands most such events on without a copy.
 */
export function renameField(from: string, to: string): Upcaster {
  return (data) => {
    if (!Object.hasOwn(data, from)) return data;
    const renamed: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(data)) renamed[key === from ? to : key] = value;
    return renamed;
  };
}

/**
 * How each event type's data changed, oldest change first: entry i turns version i + 1 into
 * version i + 2, so a type's current version is one more than its number of entries. The schemas
 * of the catalogue describe the current version, the one the console writes; a stored event of an
 * older version is upcast on read (decodeEvent, the trusted replay, the evidence fold). To change
 * an event: docs/development.md, "Changing an event".
 */
export const upcasters: { readonly [T in EventType]?: readonly Upcaster[] } = {
  StockMovementRecorded: [
    // v2: the second member who witnessed a high-value movement is `witnessId` (v1: `secondActorId`).
    renameField('secondActorId', 'witnessId'),
  ],
  OrderDrafted: [
    // v2: `lineCount` is required; a v1 draft had as many as its lines.
    (data) => ({ ...data, lineCount: Array.isArray(data.lines) ? data.lines.length : 0 }),
  ],
};
