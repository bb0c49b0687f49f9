// Submission and the approval stages of the order's plan.
import { evaluateApprovalPlan } from '../approvalPolicy.js';
import { approvers, purchaser } from './actors.js';
import { allocate } from './orderAllocation.js';
import { after, cancel, cancellationReasons, orderStream, releaseOnOrder } from './orderSteps.js';
import type { SimOrder } from './simOrder.js';
import { laterAtWork, minuteMs, type TenantContext } from './tenantContext.js';

const rejectionReasons = [
  'Monthly supply budget for this clinic is exhausted',
  'Duplicate of an open order',
  'Quantity is well above the clinic usage; please revise',
  'Use the contracted equivalent item instead',
];

export function submit(order: SimOrder, ctx: TenantContext): void {
  const plan = evaluateApprovalPlan(
    { type: order.type, lines: order.lines, value: order.value, currency: order.value === undefined ? undefined : ctx.world.currency },
    ctx.now() >= ctx.policyChangeMs ? 2 : 1,
  );
  order.plan = plan;
  ctx.emit(orderStream(ctx, order), 'OrderSubmitted', { orderId: order.id, submittedBy: order.requesterId, approvalPlan: plan });
  order.status = 'submitted';
  if (order.fate.cancelAfter === 'submitted') {
    after(ctx, order, 30, 26 * 60, (o) => cancel(ctx, o, o.requesterId, ctx.rng.pick(cancellationReasons)));
  } else if (plan.requiresApproval) {
    after(ctx, order, 1, 10, (o) => requestApproval(ctx, o, 0));
  } else {
    after(ctx, order, 1, 20, approve);
  }
}

function requestApproval(ctx: TenantContext, order: SimOrder, stageIndex: number): void {
  const step = order.plan?.steps[stageIndex];
  if (step === undefined) return;
  ctx.emit(orderStream(ctx, order), 'OrderApprovalRequested', { orderId: order.id, stage: step.stage });
  order.status = 'pending_approval';
  if (order.fate.stopAt === 'pending_approval') return;
  const due = order.fate.fast
    ? ctx.now() + Math.floor(ctx.rng.between(5, 40) * minuteMs)
    : order.fate.slowApproval
      ? laterAtWork(ctx.rng, ctx.now(), 2 * 24 * 60, 10 * 24 * 60)
      : laterAtWork(ctx.rng, ctx.now(), 15, 10 * 60);
  ctx.at(due, () => decide(ctx, order, stageIndex));
}

function decide(ctx: TenantContext, order: SimOrder, stageIndex: number): void {
  const step = order.plan?.steps[stageIndex];
  if (step === undefined || order.status !== 'pending_approval') return;
  const candidates = approvers(ctx, step.requiredScope, order.requesterId);
  if (order.fate.rejectAtStage === stageIndex) {
    ctx.emit(orderStream(ctx, order), 'OrderRejected', {
      orderId: order.id,
      stage: step.stage,
      approverId: ctx.rng.pick(candidates).id,
      reason: ctx.rng.pick(rejectionReasons),
    });
    order.status = 'rejected';
    releaseOnOrder(ctx, order);
    return;
  }
  const chosen = new Set<string>();
  for (let i = 0; i < step.minApprovers; i += 1) {
    const remaining = candidates.filter((m) => !chosen.has(m.id));
    const approver = ctx.rng.pick(remaining.length > 0 ? remaining : candidates);
    chosen.add(approver.id);
    ctx.emit(orderStream(ctx, order), 'OrderApprovalGranted', {
      orderId: order.id,
      stage: step.stage,
      approverId: approver.id,
      ...(ctx.rng.chance(0.2) ? { comment: ctx.rng.pick(['OK', 'Approved, within budget', 'Fine for this month', 'Go ahead']) } : {}),
    });
  }
  const nextStep = order.plan?.steps[stageIndex + 1];
  if (nextStep !== undefined) {
    requestApproval(ctx, order, stageIndex + 1);
  } else {
    approve(order, ctx);
  }
}

function approve(order: SimOrder, ctx: TenantContext): void {
  ctx.emit(orderStream(ctx, order), 'OrderApproved', { orderId: order.id });
  order.status = 'approved';
  if (order.fate.cancelAfter === 'approved') {
    after(ctx, order, 60, 30 * 60, (o) => cancel(ctx, o, purchaser(ctx).id, ctx.rng.pick(cancellationReasons)));
  } else {
    after(ctx, order, 30, 6 * 60, allocate);
  }
}
