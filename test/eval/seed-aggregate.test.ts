// aggregateSeeds: mean and SE over seeds with NaN (undefined for a seed) excluded and counted.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { aggregateSeeds } from '../../src/eval/seed-aggregate.js';

describe('aggregateSeeds', () => {
  it('gives the mean and sd/sqrt(n) of the seed values', () => {
    // mean 0.625; squared deviations 0.015625 + 0.015625 + 0.140625 + 0.140625 = 0.3125; sd = sqrt(0.3125/3).
    const result = aggregateSeeds([0.5, 0.75, 1.0, 0.25]);
    expect(result.mean).toBe(0.625);
    expect(result.se).toBeCloseTo(Math.sqrt(0.3125 / 3) / 2, 15);
    expect(result.se).toBeCloseTo(0.161374, 6);
    expect(result.count).toBe(4);
    expect(result.perSeed).toEqual([0.5, 0.75, 1.0, 0.25]);
  });

  it('gives zero SE when every seed agrees', () => {
    expect(aggregateSeeds([0.4, 0.4, 0.4])).toEqual({ mean: 0.4, se: 0, count: 3, perSeed: [0.4, 0.4, 0.4] });
  });

  it('excludes seeds where the metric is undefined and records the count', () => {
    // Defined: 0.2 and 0.4 → mean 0.3, sd = sqrt(0.01 + 0.01) = 0.1414, se = 0.1414/sqrt(2) = 0.1.
    const result = aggregateSeeds([0.2, Number.NaN, 0.4]);
    expect(result.mean).toBeCloseTo(0.3, 15);
    expect(result.se).toBeCloseTo(0.1, 15);
    expect(result.count).toBe(2);
    expect(result.perSeed).toEqual([0.2, null, 0.4]);
  });

  it('has no SE with one defined seed and no mean with none', () => {
    expect(aggregateSeeds([0.7, Number.NaN])).toEqual({ mean: 0.7, se: null, count: 1, perSeed: [0.7, null] });
    expect(aggregateSeeds([Number.NaN, Number.NaN])).toEqual({ mean: null, se: null, count: 0, perSeed: [null, null] });
    expect(aggregateSeeds([])).toEqual({ mean: null, se: null, count: 0, perSeed: [] });
  });

  it('refuses infinite values, naming the seed', () => {
    expect(() => aggregateSeeds([1, Number.POSITIVE_INFINITY])).toThrow(ConfigError);
    expect(() => aggregateSeeds([1, Number.POSITIVE_INFINITY])).toThrow(/perSeed\[1\] is Infinity/);
  });
});
