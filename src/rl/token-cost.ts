// The token-cost factor of Equation 1: 1 − λ · min(1, Σᵢ|τᵢ| / (N·L)), the share of the team's
// total allowance N·L it spent, weighted by λ. Team and individual rewards both multiply success
// by it. L is everything an agent may generate, its work allowance plus its final-answer allowance:
// Σᵢ|τᵢ| counts both kinds of tokens, and the paper's cost is "the fraction of the team's total
// allowance NL that the team spent" (§3), with aggregation's allowance "8,192 work tokens plus 1,024
// for the final answer" (App. A); agentAllowance (harness/episode-settings.ts) gives it. Token
// efficiency (App. M) uses the same N·L.


/** What the token-cost factor depends on. */
export interface TokenCostOptions {
  /** Tokens the whole team generated, Σᵢ|τᵢ|. */
  readonly generatedTokens: number;
  /** Agents in the team, N. */
  readonly teamSize: number;
  /** Per-agent allowance L. */
  readonly allowance: number;
  /** Token cost λ. */
  readonly tokenCost: number;
}

/** 1 − λ · min(1, Σᵢ|τᵢ| / (N·L)); throws a RangeError on a non-positive team size or allowance or a negative token count. */
export function tokenCostFactor(options: TokenCostOptions): number {
  const { generatedTokens, teamSize, allowance, tokenCost } = options;
  if (!(teamSize > 0) || !(allowance > 0)) {
    throw new RangeError(`tokenCostFactor: teamSize (${teamSize}) and allowance (${allowance}) must be positive.`);
  }
  if (!(generatedTokens >= 0)) throw new RangeError(`tokenCostFactor: generatedTokens must be >= 0, got ${generatedTokens}.`);
  return 1 - tokenCost * Math.min(1, generatedTokens / (teamSize * allowance));
}
