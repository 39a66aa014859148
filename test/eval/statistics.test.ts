// Paired t-test (t, df, two-sided p against published values, d_z), zero-variance edge cases, Bonferroni.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { bonferroni, correctWithinFamilies } from '../../src/eval/statistics/bonferroni.js';
import { pairedTTest, twoSidedPValue } from '../../src/eval/statistics/paired-t-test.js';

// Student's sleep data (Cushny and Peebles; R's `sleep`): extra hours of sleep under drug 1 and drug 2.
// R: t.test(group1, group2, paired = TRUE) gives t = -4.0621, df = 9, p-value = 0.002833, mean diff -1.58.
const SLEEP_DRUG_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
const SLEEP_DRUG_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];

describe('twoSidedPValue', () => {
  it('matches tabulated two-sided critical values of the t distribution with 5 df', () => {
    expect(twoSidedPValue({ t: 2.570582, df: 5 })).toBeCloseTo(0.05, 6);
    expect(twoSidedPValue({ t: 4.032143, df: 5 })).toBeCloseTo(0.01, 6);
    expect(twoSidedPValue({ t: 2.015048, df: 5 })).toBeCloseTo(0.1, 6);
    expect(twoSidedPValue({ t: -2.570582, df: 5 })).toBeCloseTo(0.05, 6);
  });

  it('matches the closed forms for 1 df (Cauchy) and 2 df', () => {
    for (const t of [0.3, 1, 2.5, 12]) {
      expect(twoSidedPValue({ t, df: 1 })).toBeCloseTo(1 - (2 / Math.PI) * Math.atan(t), 9);
      expect(twoSidedPValue({ t, df: 2 })).toBeCloseTo(1 - t / Math.sqrt(2 + t * t), 9);
    }
  });

  it('is 1 at t = 0, 0 at infinite t and NaN at NaN', () => {
    expect(twoSidedPValue({ t: 0, df: 5 })).toBe(1);
    expect(twoSidedPValue({ t: Number.NEGATIVE_INFINITY, df: 5 })).toBe(0);
    expect(twoSidedPValue({ t: Number.NaN, df: 5 })).toBeNaN();
  });
});

describe('pairedTTest', () => {
  it("reproduces R's paired t-test on Student's sleep data", () => {
    const result = pairedTTest({ first: SLEEP_DRUG_1, second: SLEEP_DRUG_2 });
    expect(result.pairs).toBe(10);
    expect(result.df).toBe(9);
    expect(result.meanDiff).toBeCloseTo(-1.58, 12);
    // Differences 1.2, 2.4, 1.3, 1.3, 0, 1, 1.8, 0.8, 4.6, 1.4: squared deviations sum to 13.616, sd = sqrt(13.616/9).
    expect(result.sdDiff).toBeCloseTo(Math.sqrt(13.616 / 9), 12);
    expect(result.t).toBeCloseTo(-4.0621, 4);
    expect(result.t).toBeCloseTo(-1.58 / (Math.sqrt(13.616 / 9) / Math.sqrt(10)), 10);
    expect(result.p).toBeCloseTo(0.002833, 6);
    expect(result.dz).toBeCloseTo(-1.58 / Math.sqrt(13.616 / 9), 10);
    expect(result.dz).toBeCloseTo(-1.284558, 6);
  });

  it('gives t = sqrt(21) and d_z = sqrt(3.5) for differences 1..6 (5 df)', () => {
    // mean 3.5, sd = sqrt(17.5/5) = sqrt(3.5), se = sqrt(3.5/6), t = 3.5/sqrt(3.5/6) = sqrt(21).
    const result = pairedTTest({ first: [2, 4, 6, 8, 10, 12], second: [1, 2, 3, 4, 5, 6] });
    expect(result.df).toBe(5);
    expect(result.t).toBeCloseTo(Math.sqrt(21), 12);
    expect(result.dz).toBeCloseTo(Math.sqrt(3.5), 12);
    expect(result.se).toBeCloseTo(Math.sqrt(3.5 / 6), 12);
    expect(result.p).toBeCloseTo(twoSidedPValue({ t: Math.sqrt(21), df: 5 }), 15);
    expect(result.p).toBeGreaterThan(0.001);
    expect(result.p).toBeLessThan(0.01);
  });

  it('gives t = ±Infinity, p = 0 when every difference is the same non-zero value', () => {
    const up = pairedTTest({ first: [1, 2, 3], second: [0, 1, 2] });
    expect(up.t).toBe(Number.POSITIVE_INFINITY);
    expect(up.dz).toBe(Number.POSITIVE_INFINITY);
    expect(up.p).toBe(0);
    const down = pairedTTest({ first: [0, 1, 2], second: [1, 2, 3] });
    expect(down.t).toBe(Number.NEGATIVE_INFINITY);
    expect(down.p).toBe(0);
  });

  it('treats floating-point rounding in equal differences as zero variance', () => {
    // 0.3 − 0.1 = 0.19999999999999998 but 0.4 − 0.2 = 0.2: a measured sd of about 1e-17 is rounding, not variation.
    const result = pairedTTest({ first: [0.3, 0.4, 0.5], second: [0.1, 0.2, 0.3] });
    expect(result.sdDiff).toBe(0);
    expect(result.t).toBe(Number.POSITIVE_INFINITY);
    expect(result.p).toBe(0);
  });

  it('gives NaN t, p and d_z when every difference is zero', () => {
    const result = pairedTTest({ first: [0.5, 0.25, 1], second: [0.5, 0.25, 1] });
    expect(result.meanDiff).toBe(0);
    expect(result.t).toBeNaN();
    expect(result.p).toBeNaN();
    expect(result.dz).toBeNaN();
  });

  it('refuses fewer than two pairs, unequal lengths and non-finite values', () => {
    expect(() => pairedTTest({ first: [1], second: [2] })).toThrow(ConfigError);
    expect(() => pairedTTest({ first: [1], second: [2] })).toThrow(/at least 2 seeds/);
    expect(() => pairedTTest({ first: [1, 2, 3], second: [1, 2] })).toThrow(/first has 3 values and second 2/);
    expect(() => pairedTTest({ first: [1, Number.NaN], second: [1, 2] })).toThrow(/pair 1 is \(NaN, 2\)/);
  });
});

describe('bonferroni', () => {
  it('multiplies by the family size and caps at 1', () => {
    expect(bonferroni({ p: 0.02, familySize: 3 })).toBeCloseTo(0.06, 15);
    expect(bonferroni({ p: 0.5, familySize: 3 })).toBe(1);
    expect(bonferroni({ p: 0.02, familySize: 1 })).toBe(0.02);
    expect(bonferroni({ p: Number.NaN, familySize: 2 })).toBeNaN();
  });

  it('refuses a family size that is not a positive integer', () => {
    expect(() => bonferroni({ p: 0.1, familySize: 0 })).toThrow(/familySize is 0/);
    expect(() => bonferroni({ p: 0.1, familySize: 1.5 })).toThrow(ConfigError);
  });

  it('corrects within each named family by that family’s size', () => {
    const corrected = correctWithinFamilies([
      { family: 'A', p: 0.01, id: 1 },
      { family: 'B', p: 0.04, id: 2 },
      { family: 'A', p: 0.03, id: 3 },
      { family: 'A', p: 0.4, id: 4 },
    ]);
    expect(corrected.map((test) => test.familySize)).toEqual([3, 1, 3, 3]);
    expect(corrected[0].pCorrected).toBeCloseTo(0.03, 15);
    expect(corrected[1].pCorrected).toBe(0.04);
    expect(corrected[2].pCorrected).toBeCloseTo(0.09, 15);
    expect(corrected[3].pCorrected).toBe(1);
    expect(corrected[2].id).toBe(3);
  });
});
