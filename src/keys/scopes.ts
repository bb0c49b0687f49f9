/** Scopes of the specification, in colon form. */
export const allScopes = [
  'clinics:read',
  'catalog:read',
  'catalog.cost:read',
  'inventory:read',
  'orders:read',
  'fulfillment:read',
  'analytics:read',
  'orders.value:read',
  'orders.patient_ref:read',
] as const;

export type Scope = (typeof allScopes)[number];

/** These exist for console members only: no API key can ever hold them. */
export const scopesNoKeyCanHold: readonly Scope[] = ['orders.value:read', 'orders.patient_ref:read'];

export const issuableScopes: readonly Scope[] = allScopes.filter((scope) => !scopesNoKeyCanHold.includes(scope));

export function isScope(value: string): value is Scope {
  return (allScopes as readonly string[]).includes(value);
}
