// Eq. 1 on hand-computed cases: the token-cost factor and the team reward, cost charged only on
// success; L is the work plus final-answer allowance; App. C's check that team members share a reward.
import { describe, expect, it } from 'vitest';
import { teamReward } from '../../src/rl/team-reward.js';
import { tokenCostFactor } from '../../src/rl/token-cost.js';
import { agentAllowance } from '../../src/harness/episode-settings.js';
import { teamRewardMismatches } from '../../src/rl/rl-loop.js';
import type { AgentSequence } from '../../src/policy/agent-sequence.js';

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

describe('the allowance L of N·L', () => {
  it('is the work allowance plus the final-answer allowance, as the counted tokens include both', () => {
    expect(agentAllowance({ workAllowance: 8192, finalAllowance: 1024 })).toBe(9216);
    // A team of 4 that spent its whole work allowance and nothing of its final one pays λ · 8192/9216.
    const cost = tokenCostFactor({ generatedTokens: 4 * 8192, teamSize: 4, allowance: agentAllowance({ workAllowance: 8192, finalAllowance: 1024 }), tokenCost: 0.25 });
    expect(cost).toBeCloseTo(1 - 0.25 * (8192 / 9216), 12);
  });
});

describe('teamRewardMismatches (App. C: every member of a team receives the same reward)', () => {
  const member = (weight: number) => ({ sequence: {} as AgentSequence, weight });
  it('counts the teams whose members were weighted differently, except under individual rewards', () => {
    const units = [{ members: [member(0.5), member(0.5)] }, { members: [member(0.5), member(-1)] }, { members: [member(0)] }];
    expect(teamRewardMismatches('s3', units)).toBe(1);
    expect(teamRewardMismatches('no-comm', units.slice(0, 1))).toBe(0);
    expect(teamRewardMismatches('individual', units)).toBe(0);
  });
});
