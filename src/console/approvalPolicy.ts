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

/** Order values (minor units of the order's currency) at which each policy version asks for more. */
type PolicyThresholds = { readonly managerThreshold: number; readonly financeThreshold: number; readonly twoFinanceApproversFrom: number | undefined };

function thresholdsOf(policyVersion: number): PolicyThresholds {
  return policyVersion >= 2
    ? { managerThreshold: 15_000, financeThreshold: 100_000, twoFinanceApproversFrom: 500_000 }
    : { managerThreshold: 25_000, financeThreshold: 150_000, twoFinanceApproversFrom: undefined };
}

/** The rules of a policy version in words and numbers, as the same thresholds apply them. */
export function approvalPolicySummary(policyVersion: number = latestPolicyVersion) {
  const { managerThreshold, financeThreshold, twoFinanceApproversFrom } = thresholdsOf(policyVersion);
  return {
    policyVersion,
    amounts: 'Order values and thresholds are integers in the minor unit of the order currency.',
    steps: [
      {
        stage: 'clinical_lead',
        requiredPermission: approvalScopes.clinicalLead,
        minApprovers: 1,
        when: 'A clinical order with at least one high-value line.',
      },
      {
        stage: 'manager',
        requiredPermission: approvalScopes.manager,
        minApprovers: 1,
        when: `The order value is at least ${managerThreshold}, or unknown because no line has a recorded cost.`,
        valueThreshold: managerThreshold,
      },
      {
        stage: 'finance',
        requiredPermission: approvalScopes.finance,
        minApprovers: 1,
        when: `Any high-value line, or an order value of at least ${financeThreshold}.`,
        valueThreshold: financeThreshold,
        ...(twoFinanceApproversFrom === undefined ? {} : { twoApproversFromValue: twoFinanceApproversFrom }),
      },
    ],
    noApprovalWhen: 'None of the steps applies: the order is approved on submission.',
    segregationOfDuties: 'Nobody approves an order they requested.',
  };
}

/**
 * The organisation's approval policy. Version 1 applied until mid-history; version 2 lowered the
 * manager threshold and asks two finance approvers for very large orders. An order whose value is
 * unknown (no cost recorded) always needs a manager, because nobody can tell that it is small.
 */
export function evaluateApprovalPlan(input: PlanInput, policyVersion: number = latestPolicyVersion): ApprovalPlan {
  const highValue = input.lines.some((line) => line.highValue);
  const { managerThreshold, financeThreshold, twoFinanceApproversFrom } = thresholdsOf(policyVersion);
  const steps: ApprovalPlan['steps'] = [];
  if (input.type === 'clinical' && highValue) {
    steps.push({ stage: 'clinical_lead', requiredScope: approvalScopes.clinicalLead, minApprovers: 1 });
  }
  if (input.value === undefined || input.value >= managerThreshold) {
    steps.push({ stage: 'manager', requiredScope: approvalScopes.manager, minApprovers: 1 });
  }
  if (highValue || (input.value !== undefined && input.value >= financeThreshold)) {
    const twoApprovers = twoFinanceApproversFrom !== undefined && input.value !== undefined && input.value >= twoFinanceApproversFrom;
    steps.push({ stage: 'finance', requiredScope: approvalScopes.finance, minApprovers: twoApprovers ? 2 : 1 });
  }
  return {
    policyVersion,
    requiresApproval: steps.length > 0,
    steps,
    ...(input.value === undefined || input.currency === undefined ? {} : { evaluatedValue: input.value, currency: input.currency }),
  };
}
