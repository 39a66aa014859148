// Eq. 2 on hand-computed cases, with the population std.
import { describe, expect, it } from 'vitest';
import { groupAdvantages } from '../../src/rl/group-advantage.js';

describe('groupAdvantages', () => {
  it('normalizes by the population std', () => {
    // rewards 1, 0: mean 0.5, population std 0.5 → ±1 (a sample std would give ±0.707).
    const [a, b] = groupAdvantages([1, 0], { epsilon: 1e-8 });
    expect(a).toBeCloseTo(0.5 / (0.5 + 1e-8), 12);
    expect(b).toBeCloseTo(-0.5 / (0.5 + 1e-8), 12);
  });

  it('computes a hand-worked group of four', () => {
    // rewards 1, 0.5, 0, 0.5: mean 0.5, variance (0.25 + 0 + 0.25 + 0)/4 = 0.125, std √0.125.
    const std = Math.sqrt(0.125);
    const advantages = groupAdvantages([1, 0.5, 0, 0.5], { epsilon: 1e-8 });
    expect(advantages[0]).toBeCloseTo(0.5 / (std + 1e-8), 12);
    expect(advantages[1]).toBe(0);
    expect(advantages[2]).toBeCloseTo(-0.5 / (std + 1e-8), 12);
  });

  it('gives zero advantage when every team has the same reward', () => {
    expect(groupAdvantages([0.1, 0.1, 0.1], { epsilon: 1e-8 })).toEqual([0, 0, 0]);
    expect(groupAdvantages([0, 0, 0, 0], { epsilon: 1e-8 })).toEqual([0, 0, 0, 0]);
  });

  it('gives zero advantage to a single team', () => {
    expect(groupAdvantages([0.8], { epsilon: 1e-8 })).toEqual([0]);
  });

  it('returns nothing for an empty group', () => {
    expect(groupAdvantages([], { epsilon: 1e-8 })).toEqual([]);
  });

  it('refuses a NaN reward', () => {
    expect(() => groupAdvantages([1, Number.NaN], { epsilon: 1e-8 })).toThrow(/reward 1 is NaN/);
  });

  it('sums to zero', () => {
    const sum = groupAdvantages([0.9, 0.2, 0, 0.75, 0, 0.6, 1, 0], { epsilon: 1e-8 }).reduce((s, a) => s + a, 0);
    expect(Math.abs(sum)).toBeLessThan(1e-12);
  });
});
