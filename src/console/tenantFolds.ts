import type { EventEnvelope } from '../events/index.js';

/** Small folds of the tenant's own streams, for console actions (the read models live elsewhere). */
export type WorkspaceView = { readonly workspaceId: string; readonly name: string; readonly status: 'active' | 'suspended' };

export function workspaceView(events: readonly EventEnvelope[]): WorkspaceView | undefined {
  let view: WorkspaceView | undefined;
  for (const event of events) {
    if (event.type === 'WorkspaceCreated') view = { workspaceId: event.data.workspaceId, name: event.data.name, status: 'active' };
    else if (view !== undefined && event.type === 'WorkspaceSuspended') view = { ...view, status: 'suspended' };
    else if (view !== undefined && event.type === 'WorkspaceReactivated') view = { ...view, status: 'active' };
  }
  return view;
}

export type MemberView = {
  readonly memberId: string;
  readonly name: string;
  readonly role: string;
  readonly permissions: readonly string[];
  readonly clinicIds: readonly string[];
  readonly status: 'active' | 'suspended' | 'removed';
  readonly joinedAt: string;
};

export function memberView(events: readonly EventEnvelope[]): MemberView | undefined {
  let view: MemberView | undefined;
  for (const event of events) {
    if (event.type === 'MemberJoined') {
      const { memberId, name, role, permissions, clinicIds } = event.data;
      view = { memberId, name, role, permissions, clinicIds, status: 'active', joinedAt: event.occurredAt };
    } else if (view !== undefined && view.status !== 'removed') {
      if (event.type === 'MemberSuspended') view = { ...view, status: 'suspended' };
      else if (event.type === 'MemberReactivated') view = { ...view, status: 'active' };
      else if (event.type === 'MemberRemoved') view = { ...view, status: 'removed' };
    }
  }
  return view;
}

export type ClinicView = { readonly clinicId: string; readonly name: string; readonly status: string; readonly openedAt: string };

export function clinicView(events: readonly EventEnvelope[]): ClinicView | undefined {
  let view: ClinicView | undefined;
  for (const event of events) {
    if (event.type === 'ClinicOpened') view = { clinicId: event.data.clinicId, name: event.data.name, status: event.data.status, openedAt: event.occurredAt };
    else if (view !== undefined && event.type === 'ClinicRenamed') view = { ...view, name: event.data.name };
    else if (view !== undefined && event.type === 'ClinicStatusChanged') view = { ...view, status: event.data.status };
  }
  return view;
}

export type WarehouseView = {
  readonly warehouseId: string;
  readonly name: string;
  readonly kind: 'central' | 'express';
  readonly clinicId: string | undefined;
  readonly status: string;
};

export function warehouseView(events: readonly EventEnvelope[]): WarehouseView | undefined {
  let view: WarehouseView | undefined;
  for (const event of events) {
    if (event.type === 'WarehouseOpened') {
      const { warehouseId, name, kind, clinicId, status } = event.data;
      view = { warehouseId, name, kind, clinicId, status };
    } else if (view !== undefined && event.type === 'WarehouseStatusChanged') {
      view = { ...view, status: event.data.status };
    }
  }
  return view;
}

export type ItemView = {
  readonly itemId: string;
  readonly sku: string;
  readonly name: string;
  readonly categoryId: string;
  readonly unitOfMeasure: string;
  readonly highValue: boolean;
  readonly tracksSerial: boolean;
  readonly status: string;
  /** Minor units per one item unit, when a cost is recorded in the item's own unit. */
  readonly unitCost: number | undefined;
  readonly currency: string | undefined;
};

export function itemView(events: readonly EventEnvelope[]): ItemView | undefined {
  let view: ItemView | undefined;
  for (const event of events) {
    if (event.type === 'CatalogItemDefined') {
      const { itemId, sku, name, categoryId, unitOfMeasure, highValue, tracksSerial, status } = event.data;
      view = { itemId, sku, name, categoryId, unitOfMeasure, highValue, tracksSerial, status, unitCost: undefined, currency: undefined };
    } else if (view !== undefined && event.type === 'CatalogItemRevised') {
      const revised = event.data;
      view = {
        ...view,
        sku: revised.sku ?? view.sku,
        name: revised.name ?? view.name,
        categoryId: revised.categoryId ?? view.categoryId,
        unitOfMeasure: revised.unitOfMeasure ?? view.unitOfMeasure,
        highValue: revised.highValue ?? view.highValue,
        tracksSerial: revised.tracksSerial ?? view.tracksSerial,
      };
    } else if (view !== undefined && event.type === 'CatalogItemStatusChanged') {
      view = { ...view, status: event.data.status };
    } else if (view !== undefined && event.type === 'CatalogItemCostRecorded') {
      const { cost, currency, costMeasurement } = event.data;
      const usable = cost !== undefined && costMeasurement !== undefined && costMeasurement.unitOfMeasure === view.unitOfMeasure;
      view = {
        ...view,
        unitCost: usable ? Math.max(1, Math.round(cost / costMeasurement.quantity)) : undefined,
        currency: usable ? currency : undefined,
      };
    }
  }
  return view;
}
