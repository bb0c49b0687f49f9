import type { DiscrepancyReason, ExceptionReason, OrderFate } from './simOrder.js';
import type { Prng } from './prng.js';

const exceptionReasons: readonly ExceptionReason[] = ['delayed', 'delayed', 'damaged', 'temperature', 'wrong_address', 'refused', 'lost'];
const discrepancyReasons: readonly DiscrepancyReason[] = ['short', 'short', 'short', 'damaged', 'damaged', 'wrong_item', 'expired', 'over'];

/** Draws what will happen to an ordinary order: most go through cleanly, some do not. */
export function randomFate(rng: Prng, kind: 'general' | 'case'): OrderFate {
  const roll = rng.float();
  const cancelAfter = roll < 0.012 ? 'submitted' : roll < 0.027 ? 'approved' : roll < 0.035 ? 'allocated' : undefined;
  const rejectRoll = rng.float();
  const rejectAtStage = rejectRoll < (kind === 'case' ? 0.04 : 0.07) ? 0 : rejectRoll < 0.09 ? 1 : undefined;
  const exceptionReason = rng.chance(0.06) ? rng.pick(exceptionReasons) : undefined;
  const discrepancy =
    exceptionReason === 'damaged' && rng.chance(0.6) ? 'damaged' : rng.chance(kind === 'case' ? 0.03 : 0.07) ? rng.pick(discrepancyReasons) : undefined;
  return {
    abandon: rng.chance(0.02),
    ...(cancelAfter === undefined ? {} : { cancelAfter }),
    ...(rejectAtStage === undefined ? {} : { rejectAtStage }),
    slowApproval: rng.chance(0.1),
    ...(exceptionReason === undefined
      ? {}
      : { exception: { reasonCode: exceptionReason, resolution: exceptionReason === 'lost' ? 'written_off' : 'redelivered' } }),
    ...(discrepancy === undefined ? {} : { discrepancy }),
    fast: false,
  };
}
