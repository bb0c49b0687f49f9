import type { z } from 'zod';
import type { approvalPlan } from '../events/orders.js';

export type ApprovalPlan = z.infer<typeof approvalPlan>;

/** Member permissions that approval steps require (a step's `requiredScope`). */
export const approvalScopes = {
  manager: 'orders.approve',
  finance: 'orders.approve_high_value',
  clinicalLead: 'clinical.approve',
} as const;

export type PlanInput = {
  readonly type: 'general' | 'clinical';
  readonly lines: readonly { readonly highValue: boolean }[];
  /** Order total in minor units; undefined when no line has a known cost. */
  readonly value: number | undefined;
  readonly currency: string | undefined;
};

export const latestPolicyVersion = 2;

/**
 * The organisation's approval policy. Version 1 applied until mid-history; version 2 lowered the
 * manager threshold and asks two finance approvers for very large orders. An order whose value is
 * unknown (no cost recorded) always needs a manager, because nobody can tell that it is small.
 */
export function evaluateApprovalPlan(input: PlanInput, policyVersion: number = latestPolicyVersion): ApprovalPlan {
  const highValue = input.lines.some((line) => line.highValue);
  const managerThreshold = policyVersion >= 2 ? 15_000 : 25_000;
  const financeThreshold = policyVersion >= 2 ? 100_000 : 150_000;
  const steps: ApprovalPlan['steps'] = [];
  if (input.type === 'clinical' && highValue) {
    steps.push({ stage: 'clinical_lead', requiredScope: approvalScopes.clinicalLead, minApprovers: 1 });
  }
  if (input.value === undefined || input.value >= managerThreshold) {
    steps.push({ stage: 'manager', requiredScope: approvalScopes.manager, minApprovers: 1 });
  }
  if (highValue || (input.value !== undefined && input.value >= financeThreshold)) {
    const twoApprovers = policyVersion >= 2 && input.value !== undefined && input.value >= 500_000;
    steps.push({ stage: 'finance', requiredScope: approvalScopes.finance, minApprovers: twoApprovers ? 2 : 1 });
  }
  return {
    policyVersion,
    requiresApproval: steps.length > 0,
    steps,
    ...(input.value === undefined || input.currency === undefined ? {} : { evaluatedValue: input.value, currency: input.currency }),
  };
}
