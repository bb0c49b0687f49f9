import { describe, expect, it } from 'vitest';
import { evaluateApprovalPlan } from './approvalPolicy.js';

const everyday = { highValue: false };
const implant = { highValue: true };

describe('evaluateApprovalPlan', () => {
  it('lets a small everyday order through without approval', () => {
    expect(evaluateApprovalPlan({ type: 'general', lines: [everyday], value: 4_500, currency: 'EUR' })).toEqual({
      policyVersion: 2,
      requiresApproval: false,
      steps: [],
      evaluatedValue: 4_500,
      currency: 'EUR',
    });
  });

  it('asks a manager above the threshold of the policy version, and for an order of unknown value', () => {
    const order = { type: 'general', lines: [everyday], value: 20_000, currency: 'EUR' } as const;
    expect(evaluateApprovalPlan(order, 1).requiresApproval).toBe(false);
    expect(evaluateApprovalPlan(order, 2).steps).toEqual([{ stage: 'manager', requiredScope: 'orders.approve', minApprovers: 1 }]);
    expect(evaluateApprovalPlan({ type: 'general', lines: [everyday], value: undefined, currency: undefined })).toEqual({
      policyVersion: 2,
      requiresApproval: true,
      steps: [{ stage: 'manager', requiredScope: 'orders.approve', minApprovers: 1 }],
    });
  });

  it('sends high-value clinical orders to the clinical lead, a manager and finance, with two finance approvers when very large', () => {
    const plan = evaluateApprovalPlan({ type: 'clinical', lines: [implant], value: 600_000, currency: 'USD' });
    expect(plan.steps).toEqual([
      { stage: 'clinical_lead', requiredScope: 'clinical.approve', minApprovers: 1 },
      { stage: 'manager', requiredScope: 'orders.approve', minApprovers: 1 },
      { stage: 'finance', requiredScope: 'orders.approve_high_value', minApprovers: 2 },
    ]);
    expect(plan).toMatchObject({ requiresApproval: true, evaluatedValue: 600_000, currency: 'USD' });
  });
});
