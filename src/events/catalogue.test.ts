import { randomUUID } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { checkTrustedEvent, currentVersionOf, decodeEvent, EventDecodeError, eventSchemas, EventVersionError, newEvent, upcastData } from './index.js';

const envelope = () => ({ eventId: randomUUID(), tenantId: 'ws_1', occurredAt: '2026-11-01T08:00:00.000Z' });

const movementV1 = {
  movementId: 'mov_1',
  type: 'consume',
  boxId: 'box_1',
  catalogItemId: 'itm_1',
  quantityDelta: -1,
  actorId: 'mem_1',
  secondActorId: 'mem_2',
  reasonCode: 'procedure',
  occurredAt: '2026-11-01T08:00:00.000Z',
};
const line = (lineId: string) => ({ lineId, catalogItemId: 'itm_1', sku: 'S', name: 'N', requestedQty: 1, unitOfMeasure: 'box', categoryId: 'cat_1', highValue: false });
const draftV1 = { orderId: 'ord_1', number: 1, type: 'general', requesterId: 'mem_1', clinicId: 'cli_1', destinationWarehouseId: 'wh_1', lines: [line('l1'), line('l2')] };

describe('event versions', () => {
  test('each changed type is at the version after its last upcaster; the others at 1', () => {
    expect(currentVersionOf('StockMovementRecorded')).toBe(2);
    expect(currentVersionOf('OrderDrafted')).toBe(2);
    expect(currentVersionOf('ClinicOpened')).toBe(1);
    expect(newEvent('OrderDrafted', { ...draftV1, type: 'general', lineCount: 2 }, envelope()).schemaVersion).toBe(2);
  });

  test('a v1 stock movement decodes to the current shape: secondActorId is witnessId', () => {
    const decoded = decodeEvent({ ...envelope(), schemaVersion: 1, type: 'StockMovementRecorded', data: movementV1 });
    const { secondActorId, ...rest } = movementV1;
    expect(decoded?.data).toEqual({ ...rest, witnessId: secondActorId });
    expect(decoded?.schemaVersion).toBe(2);
    // A v1 movement without a witness upcasts to one without a witness.
    const { secondActorId: _, ...alone } = movementV1;
    expect(decodeEvent({ ...envelope(), schemaVersion: 1, type: 'StockMovementRecorded', data: alone })?.data).toEqual(alone);
  });

  test('a v1 draft decodes with the line count it had', () => {
    expect(decodeEvent({ ...envelope(), schemaVersion: 1, type: 'OrderDrafted', data: draftV1 })?.data).toEqual({ ...draftV1, lineCount: 2 });
  });

  test('a v2 event is read as it is, and must satisfy the v2 schema (v1 fields are not accepted in v2)', () => {
    expect(() => decodeEvent({ ...envelope(), schemaVersion: 2, type: 'StockMovementRecorded', data: movementV1 })).toThrow(/secondActorId|Unrecognized/);
    expect(() => decodeEvent({ ...envelope(), schemaVersion: 2, type: 'OrderDrafted', data: draftV1 })).toThrow(/lineCount/);
    expect(() => decodeEvent({ ...envelope(), schemaVersion: 2, type: 'OrderDrafted', data: { ...draftV1, lineCount: 3 } })).toThrow(/lineCount is the number of lines/);
  });

  test('a version newer than the code knows is an EventVersionError naming both versions', () => {
    const raw = { ...envelope(), schemaVersion: 3, type: 'StockMovementRecorded', data: { ...movementV1 } };
    expect(() => decodeEvent(raw)).toThrow(EventVersionError);
    expect(() => decodeEvent(raw)).toThrow(/schema version 3 is newer than 2/);
  });

  test('upcasting is pure: the stored data is not changed, and the same event upcasts the same', () => {
    const raw = { ...envelope(), schemaVersion: 1, type: 'OrderDrafted', data: structuredClone(draftV1) };
    expect(upcastData('OrderDrafted', raw)).toEqual(upcastData('OrderDrafted', raw));
    expect(raw.data).toEqual(draftV1);
  });
});

describe('event catalogue', () => {
  test('a stored event decodes to its typed form with its envelope', () => {
    const event = newEvent('ClinicOpened', { clinicId: 'cli_1', name: 'Centro', status: 'active' }, envelope());
    const decoded = decodeEvent({ ...event, data: JSON.parse(JSON.stringify(event.data)) });
    expect(decoded).toEqual(event);
    expect(decoded?.schemaVersion).toBe(1);
  });

  test('readers skip unknown event types instead of failing', () => {
    expect(decodeEvent({ ...envelope(), schemaVersion: 1, type: 'SomethingNew', data: { anything: true } })).toBeUndefined();
  });

  test('a known type whose data breaks its schema is a poison event, never dropped silently', () => {
    const raw = { ...envelope(), schemaVersion: 1, type: 'ClinicOpened', data: { clinicId: 'cli_1', status: 'active' } };
    expect(() => decodeEvent(raw)).toThrow(EventDecodeError);
    expect(() => decodeEvent(raw)).toThrow(/name/);
  });

  test('a schema version newer than the code is refused', () => {
    const raw = { ...envelope(), schemaVersion: 2, type: 'ClinicOpened', data: { clinicId: 'cli_1', name: 'x', status: 'active' } };
    expect(() => decodeEvent(raw)).toThrow(/schema version 2 is newer/);
  });

  test('schemas are strict: an unknown field is refused', () => {
    expect(() => newEvent('MemberSuspended', { memberId: 'mem_1', extra: 1 } as never, envelope())).toThrow();
  });

  test.each([
    ['an express warehouse without its clinic', 'WarehouseOpened', { warehouseId: 'wh_1', name: 'Express', kind: 'express', status: 'active' }],
    ['a central warehouse bound to a clinic', 'WarehouseOpened', { warehouseId: 'wh_1', name: 'Central', kind: 'central', clinicId: 'cli_1', status: 'active' }],
    ['a cost without its currency', 'CatalogItemCostRecorded', { itemId: 'itm_1', costStatus: 'confirmed', cost: 100, costMeasurement: { quantity: 1, unitOfMeasure: 'box' } }],
    ['a transfer without its warehouses', 'StockMovementRecorded', {
      movementId: 'mov_1', type: 'transfer', boxId: 'box_1', catalogItemId: 'itm_1', quantityDelta: 0, actorId: 'mem_1', occurredAt: '2026-11-01T08:00:00.000Z',
    }],
    ['a timestamp without milliseconds', 'CustodyTransferred', {
      orderId: 'ord_1', custodyMovementId: 'cus_1', type: 'handover', fromActorId: 'mem_1', toActorId: 'mem_2', occurredAt: '2026-11-01T08:00:00Z',
    }],
  ])('rules hold: %s is refused', (_name, type, data) => {
    expect(() => decodeEvent({ ...envelope(), schemaVersion: 1, type, data })).toThrow(EventDecodeError);
  });

  test('order events carry value and patient reference even though /v1 never returns them', () => {
    const shape = eventSchemas.OrderDrafted.parse({
      orderId: 'ord_1',
      number: 1,
      type: 'clinical',
      requesterId: 'mem_1',
      clinicId: 'cli_1',
      destinationWarehouseId: 'wh_1',
      patientRef: 'P-1',
      value: 1000,
      currency: 'EUR',
      lines: [{ lineId: 'l1', catalogItemId: 'itm_1', sku: 'S', name: 'N', requestedQty: 1, unitOfMeasure: 'box', categoryId: 'cat_1', highValue: false }],
      lineCount: 1,
    });
    expect(shape).toMatchObject({ patientRef: 'P-1', value: 1000, currency: 'EUR' });
  });

  describe('the trusted read of replays', () => {
    test('gives what the strict decode gives for a stored event', () => {
      const event = newEvent('ClinicOpened', { clinicId: 'cli_1', name: 'Centro', status: 'active' }, envelope());
      const stored = { ...event, data: JSON.parse(JSON.stringify(event.data)) as unknown };
      // The replay hands the checked stored event on as it is.
      checkTrustedEvent(stored);
      expect(stored).toEqual(decodeEvent(stored));
    });

    test('refuses an unknown type instead of skipping it', () => {
      expect(() => checkTrustedEvent({ ...envelope(), schemaVersion: 1, type: 'SomethingNew', data: {} })).toThrow(/SomethingNew.*unknown event type/);
    });

    test('refuses a schema version newer than the code knows, or below 1', () => {
      const raw = { ...envelope(), schemaVersion: 2, type: 'ClinicOpened', data: { clinicId: 'cli_1', name: 'x', status: 'active' } };
      expect(() => checkTrustedEvent(raw)).toThrow(EventVersionError);
      expect(() => checkTrustedEvent(raw, false)).toThrow(/schema version 2 is newer than 1/);
      expect(() => checkTrustedEvent({ ...raw, schemaVersion: 0 }, false)).toThrow(/schema version 0 is not a version/);
    });

    test('gives an older version\'s data upcast, as the strict decode does, leaving the stored data as it was', () => {
      const stored = { ...envelope(), schemaVersion: 1, type: 'StockMovementRecorded', data: { ...movementV1 } };
      const data = checkTrustedEvent(stored);
      expect(data).toEqual(decodeEvent(stored)?.data);
      expect(Object.keys(data as object)).toEqual(Object.keys(movementV1).map((key) => (key === 'secondActorId' ? 'witnessId' : key)));
      expect(stored.data).toEqual(movementV1);
    });

    test('refuses data that is not an object', () => {
      expect(() => checkTrustedEvent({ ...envelope(), schemaVersion: 1, type: 'ClinicOpened', data: [1] })).toThrow(EventDecodeError);
    });

    // Trusting stored JSON is only sound while parsing changes nothing: no schema may transform,
    // default or coerce a value, otherwise the trusted and strict replays would build different rows.
    test('no event schema transforms, defaults or coerces a value', () => {
      const changing: string[] = [];
      const visit = (schema: z.ZodTypeAny, path: string, seen: Set<z.ZodTypeAny>): void => {
        if (seen.has(schema)) return;
        seen.add(schema);
        const def: unknown = schema._def;
        // A refinement only checks; a transform or preprocess changes the value.
        if (schema instanceof z.ZodEffects && schema._def.effect.type !== 'refinement') changing.push(path);
        if (schema instanceof z.ZodDefault || schema instanceof z.ZodCatch || schema instanceof z.ZodPipeline) changing.push(path);
        if (typeof def === 'object' && def !== null && 'coerce' in def && def.coerce === true) changing.push(path);
        if (schema instanceof z.ZodObject) {
          for (const [key, child] of Object.entries(schema.shape as Record<string, z.ZodTypeAny>)) visit(child, `${path}.${key}`, seen);
        }
        const children: unknown[] = [];
        if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) children.push(schema.unwrap());
        if (schema instanceof z.ZodArray) children.push(schema.element);
        if (schema instanceof z.ZodUnion || schema instanceof z.ZodDiscriminatedUnion) children.push(...(schema.options as unknown[]));
        if (schema instanceof z.ZodIntersection) children.push(schema._def.left, schema._def.right);
        if (schema instanceof z.ZodRecord) children.push(schema.valueSchema);
        if (schema instanceof z.ZodTuple) children.push(...(schema.items as unknown[]));
        if (schema instanceof z.ZodLazy) children.push(schema.schema);
        if (schema instanceof z.ZodEffects) children.push(schema.innerType());
        for (const child of children) if (child instanceof z.ZodType) visit(child, path, seen);
      };
      for (const [type, schema] of Object.entries(eventSchemas)) visit(schema, type, new Set());
      expect(changing).toEqual([]);
    });
  });
});
