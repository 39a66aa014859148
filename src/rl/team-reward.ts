// The team reward of Equation 1: R = S · (1 − λ · min(1, Σᵢ|τᵢ| / (N·L))). The cost is charged
// only on success, so a failing team is never rewarded for quitting early, and any success earns
// more than any failure because λ < 1.
import { tokenCostFactor, type TokenCostOptions } from './token-cost.js';

/** What the team reward depends on. */
export interface TeamRewardOptions extends TokenCostOptions {
  /** Team success S. */
  readonly success: boolean;
}

/** R = S · (1 − λ · min(1, Σᵢ|τᵢ| / (N·L))). */
export function teamReward(options: TeamRewardOptions): number {
  return options.success ? tokenCostFactor(options) : 0;
}
