// Loss units of the learners of Table 1 on hand-computed groups: s³ (and s³ − communication),
// solo, individual reward and online SFT.
import { describe, expect, it } from 'vitest';
import { individualLossUnits, individualRewards } from '../../src/rl/individual-reward.js';
import { onlineSftBatch } from '../../src/rl/online-sft.js';
import { teamLossUnits } from '../../src/rl/team-loss-units.js';
import { trainSequences } from '../../src/rl/train-sequences.js';
import { episode } from './helpers.js';

const settings = { allowance: 8, tokenCost: 0.25, epsilon: 1e-8 };

describe('teamLossUnits', () => {
  it('gives every member of a team its team advantage, normalized within the problem', () => {
    // Success with 8 of 2·8 tokens → R = 1 − 0.25 · 0.5 = 0.875; failure → 0. Mean 0.4375, std 0.4375.
    const units = teamLossUnits({ ...settings, groups: [[episode(true, [{ generated: 4 }, { generated: 4 }]), episode(false, [{ generated: 2 }, { generated: 6 }])]] });
    const plus = 0.4375 / (0.4375 + 1e-8);
    expect(units).toHaveLength(2);
    expect(units[0].members.map((m) => m.weight)).toEqual([plus, plus]);
    expect(units[1].members.map((m) => m.weight)).toEqual([-plus, -plus]);
  });

  it('gives zero advantage to a group where every team failed', () => {
    const units = teamLossUnits({ ...settings, groups: [[episode(false, [{ generated: 3 }]), episode(false, [{ generated: 5 }])]] });
    expect(units.flatMap((u) => u.members.map((m) => m.weight))).toEqual([0, 0]);
  });

  it('normalizes each problem separately', () => {
    const units = teamLossUnits({
      ...settings,
      groups: [
        [episode(true, [{ generated: 8 }]), episode(false, [{ generated: 8 }])],
        [episode(true, [{ generated: 0 }]), episode(true, [{ generated: 0 }])],
      ],
    });
    // Problem 1 (N = 1, L = 8): 8 of 8 tokens → R = 0.75, and a failure → ±0.375 / (0.375 + ε). Problem 2: both 1 → 0.
    const plus = 0.375 / (0.375 + 1e-8);
    expect(units.map((u) => u.members[0].weight)).toEqual([plus, -plus, 0, 0]);
  });

  it('serves the solo learner: one unit per single-agent episode, advantages over the episodes, loss averaged per episode', () => {
    // Four solo episodes (N = 1, L = 8): rewards 1 − 0.25·(4/8) = 0.875, 0, 0, 1 − 0.25·1 = 0.75.
    const group = [episode(true, [{ generated: 4, succeeded: true }]), episode(false, [{ generated: 8 }]), episode(false, [{ generated: 2 }]), episode(true, [{ generated: 8, succeeded: true }])];
    const rewards = [0.875, 0, 0, 0.75];
    const mean = rewards.reduce((s, r) => s + r, 0) / 4;
    const std = Math.sqrt(rewards.reduce((s, r) => s + (r - mean) ** 2, 0) / 4);
    const units = teamLossUnits({ ...settings, groups: [group] });
    units.forEach((unit, i) => expect(unit.members[0].weight).toBeCloseTo((rewards[i] - mean) / (std + 1e-8), 12));
    // Episode 0: 4 tokens → each gets A_0 / 4 / 4.
    expect(trainSequences(units)[0].coef.slice(0, 4)).toEqual(new Array(4).fill(units[0].members[0].weight / 4 / 4));
  });
});

describe('individualRewards', () => {
  it('is each agent\'s own success times its team\'s token-cost factor', () => {
    // 12 of 2·8 tokens → factor 1 − 0.25 · 0.75 = 0.8125.
    expect(individualRewards(episode(true, [{ generated: 6, succeeded: true }, { generated: 6 }]), settings)).toEqual([0.8125, 0]);
  });
});

describe('individualLossUnits', () => {
  it('normalizes over all G·N agents of the problem and keeps the team as the loss unit', () => {
    // Team 1: 8 tokens → factor 0.875, rewards [0.875, 0]; team 2: 16 tokens → factor 0.75, rewards [0, 0.75].
    const group = [
      episode(true, [{ generated: 4, succeeded: true }, { generated: 4 }]),
      episode(true, [{ generated: 8 }, { generated: 8, succeeded: true }]),
    ];
    const rewards = [0.875, 0, 0, 0.75];
    const mean = 0.40625;
    const std = Math.sqrt(rewards.reduce((s, r) => s + (r - mean) ** 2, 0) / 4);
    const units = individualLossUnits({ ...settings, groups: [group] });
    expect(units).toHaveLength(2);
    const weights = units.flatMap((u) => u.members.map((m) => m.weight));
    weights.forEach((w, i) => expect(w).toBeCloseTo((rewards[i] - mean) / (std + 1e-8), 12));
  });

  it('gives zero advantage when no agent of the problem succeeded', () => {
    const units = individualLossUnits({ ...settings, groups: [[episode(false, [{ generated: 1 }, { generated: 2 }])]] });
    expect(units[0].members.map((m) => m.weight)).toEqual([0, 0]);
  });
});

describe('onlineSftBatch', () => {
  it('weights successful teams 1 and failed teams 0, keeping every team in |B|', () => {
    const batch = onlineSftBatch([episode(true, [{ generated: 2 }, { generated: 2 }]), episode(false, [{ generated: 3 }])]);
    expect(batch.skipStep).toBe(false);
    expect(batch.units.map((u) => u.members.map((m) => m.weight))).toEqual([[1, 1], [0]]);
    // 1 / |T_1| = 1/4, / |B| = 2 → 0.125 on each generated token of the successful team.
    const sequences = trainSequences(batch.units);
    expect(sequences[0].coef).toEqual([0.125, 0.125]);
    expect(sequences[2].coef).toEqual([0, 0, 0]);
  });

  it('skips the optimizer step when no team succeeded', () => {
    expect(onlineSftBatch([episode(false, [{ generated: 1 }]), episode(false, [{ generated: 1 }])]).skipStep).toBe(true);
    expect(onlineSftBatch([]).skipStep).toBe(true);
  });
});
