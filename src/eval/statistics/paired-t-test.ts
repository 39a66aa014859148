// The two-sided paired t-test on per-seed means and its standardized effect d_z (Appendix J.1: "two-sided
// paired t tests on six evaluation seed means, with five degrees of freedom"). The t distribution comes
// from @stdlib/stats-base-dists-t-cdf.
//
// Zero variance of the differences follows IEEE arithmetic rather than raising: when every difference is
// the same non-zero value, t and d_z are ±Infinity and p is 0; when every difference is 0, t, d_z and p
// are NaN (no evidence either way; the comparison table prints "—"). A standard deviation below 1e-12 of
// the largest input magnitude is rounding noise (0.3 − 0.1 ≠ 0.4 − 0.2 in floating point) and counts as 0.

import tCdf from '@stdlib/stats-base-dists-t-cdf';
import { ConfigError } from '../../errors.js';
import { meanAndSd } from '../seed-aggregate.js';

// Relative size below which the sd of the differences is floating-point rounding, not variation.
const ROUNDING_NOISE = 1e-12;

/** Two paired samples: first[i] and second[i] come from the same seed. */
export interface PairedTTestOptions {
  /** Values of the first condition (the effect is first − second). */
  readonly first: readonly number[];
  /** Values of the second condition, in the same seed order. */
  readonly second: readonly number[];
}

/** The result of a paired t-test. */
export interface PairedTTestResult {
  /** Number of pairs. */
  readonly pairs: number;
  /** Degrees of freedom, pairs − 1. */
  readonly df: number;
  /** Mean of first − second. */
  readonly meanDiff: number;
  /** Sample standard deviation of the differences. */
  readonly sdDiff: number;
  /** Standard error of the mean difference, sdDiff / sqrt(pairs). */
  readonly se: number;
  /** t = meanDiff / se. */
  readonly t: number;
  /** Two-sided p-value, 2 · P(T_df ≤ −|t|). */
  readonly p: number;
  /** Cohen's d_z = meanDiff / sdDiff. */
  readonly dz: number;
}

/** A t statistic and its degrees of freedom. */
export interface TwoSidedPValueOptions {
  /** The t statistic (±Infinity gives 0, NaN gives NaN). */
  readonly t: number;
  /** Degrees of freedom, > 0. */
  readonly df: number;
}

/** Two-sided p-value 2 · P(T_df ≤ −|t|) from the Student t cdf. */
export function twoSidedPValue(options: TwoSidedPValueOptions): number {
  return 2 * tCdf(-Math.abs(options.t), options.df);
}

/** Two-sided paired t-test of first − second; throws ConfigError for unequal lengths, non-finite values or fewer than 2 pairs. */
export function pairedTTest(options: PairedTTestOptions): PairedTTestResult {
  const { first, second } = options;
  if (first.length !== second.length) {
    throw new ConfigError(`pairedTTest: first has ${first.length} values and second ${second.length}; expected one pair per seed.`);
  }
  if (first.length < 2) {
    throw new ConfigError(`pairedTTest: ${first.length} pair(s); a paired t-test needs at least 2 seeds (df = pairs − 1).`);
  }
  const differences = first.map((value, index) => {
    const other = second[index];
    if (!Number.isFinite(value) || !Number.isFinite(other)) {
      throw new ConfigError(`pairedTTest: pair ${index} is (${value}, ${other}); expected finite numbers.`);
    }
    return value - other;
  });
  const { mean: meanDiff, sd: measuredSd } = meanAndSd(differences);
  const magnitude = Math.max(...first.map(Math.abs), ...second.map(Math.abs));
  const sdDiff = measuredSd <= ROUNDING_NOISE * magnitude ? 0 : measuredSd;
  const pairs = differences.length;
  const df = pairs - 1;
  const se = sdDiff / Math.sqrt(pairs);
  const t = meanDiff / se;
  return { pairs, df, meanDiff, sdDiff, se, t, p: twoSidedPValue({ t, df }), dz: meanDiff / sdDiff };
}
