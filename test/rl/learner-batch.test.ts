// learnerBatch dispatches each learner of Table 1 to its loss units and loss kind: PG for s³, s³ −
// communication, individual reward and solo; weighted cross-entropy for online SFT, skipping the
// step when no team succeeded; zero-advantage groups are counted.
import { describe, expect, it } from 'vitest';
import { learnerBatch } from '../../src/rl/learner-batch.js';
import { episode } from './helpers.js';

const settings = { allowance: 8, tokenCost: 0.25, epsilon: 1e-8 };
const mixed = [episode(true, [{ generated: 4, succeeded: true }, { generated: 4 }]), episode(false, [{ generated: 2 }, { generated: 6 }])];
const allFailed = [episode(false, [{ generated: 3 }, { generated: 1 }]), episode(false, [{ generated: 5 }, { generated: 1 }])];

describe('learnerBatch', () => {
  it('s3, no-comm and solo: team advantages, policy gradient, one zero group counted', () => {
    for (const learner of ['s3', 'no-comm', 'solo'] as const) {
      const batch = learnerBatch(learner, [mixed, allFailed], settings);
      expect(batch.kind).toBe('pg');
      expect(batch.skipStep).toBe(false);
      expect(batch.zeroAdvantageGroups).toBe(1);
      expect(batch.units.map((u) => Math.sign(u.members[0].weight))).toEqual([1, -1, 0, 0]);
      expect(batch.units[0].members[1].weight).toBe(batch.units[0].members[0].weight);
    }
  });

  it('individual: each agent weighted by its own success within the G·N agents', () => {
    const batch = learnerBatch('individual', [mixed], settings);
    expect(batch.kind).toBe('pg');
    const [first, second] = batch.units;
    expect(first.members[0].weight).toBeGreaterThan(0);
    expect(first.members[1].weight).toBeLessThan(0);
    expect(second.members.every((m) => m.weight === first.members[1].weight)).toBe(true);
  });

  it('online-sft: cross-entropy on successful teams; skips the step when none succeeded', () => {
    const batch = learnerBatch('online-sft', [mixed], settings);
    expect(batch.kind).toBe('sft');
    expect(batch.skipStep).toBe(false);
    expect(batch.units.map((u) => u.members.map((m) => m.weight))).toEqual([[1, 1], [0, 0]]);
    const none = learnerBatch('online-sft', [allFailed], settings);
    expect(none.skipStep).toBe(true);
    expect(none.zeroAdvantageGroups).toBe(1);
  });
});
