// Eq. 1 on hand-computed cases: the token-cost factor and the team reward, cost charged only on success.
import { describe, expect, it } from 'vitest';
import { teamReward } from '../../src/rl/team-reward.js';
import { tokenCostFactor } from '../../src/rl/token-cost.js';

describe('tokenCostFactor', () => {
  it('charges λ times the share of the team allowance spent', () => {
    // N = 4, L = 100: 200 of 400 tokens spent → 1 − 0.25 · 0.5 = 0.875.
    expect(tokenCostFactor({ generatedTokens: 200, teamSize: 4, allowance: 100, tokenCost: 0.25 })).toBe(0.875);
  });

  it('caps the share at 1', () => {
    expect(tokenCostFactor({ generatedTokens: 900, teamSize: 4, allowance: 100, tokenCost: 0.25 })).toBe(0.75);
  });

  it('is 1 when nothing was generated', () => {
    expect(tokenCostFactor({ generatedTokens: 0, teamSize: 2, allowance: 100, tokenCost: 0.25 })).toBe(1);
  });

  it('refuses a zero team size or allowance', () => {
    expect(() => tokenCostFactor({ generatedTokens: 1, teamSize: 0, allowance: 100, tokenCost: 0.25 })).toThrow(RangeError);
    expect(() => tokenCostFactor({ generatedTokens: 1, teamSize: 1, allowance: 0, tokenCost: 0.25 })).toThrow(/allowance/);
  });
});

describe('teamReward', () => {
  it('is S times the cost factor for a successful team', () => {
    // N = 2, L = 8: 4 of 16 tokens → 1 − 0.25 · 0.25 = 0.9375.
    expect(teamReward({ success: true, generatedTokens: 4, teamSize: 2, allowance: 8, tokenCost: 0.25 })).toBe(0.9375);
  });

  it('is zero for a failed team, whatever it spent', () => {
    expect(teamReward({ success: false, generatedTokens: 4, teamSize: 2, allowance: 8, tokenCost: 0.25 })).toBe(0);
    expect(teamReward({ success: false, generatedTokens: 0, teamSize: 2, allowance: 8, tokenCost: 0.25 })).toBe(0);
  });

  it('gives the same cost to teams of any size that spend the same share', () => {
    const small = teamReward({ success: true, generatedTokens: 50, teamSize: 1, allowance: 100, tokenCost: 0.25 });
    const large = teamReward({ success: true, generatedTokens: 400, teamSize: 8, allowance: 100, tokenCost: 0.25 });
    expect(small).toBe(large);
  });
});
