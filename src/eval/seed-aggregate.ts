// Mean and standard error over evaluation seeds (Appendix M: "the mean over the six seed means and its
// standard error"), skipping seeds where a metric is undefined (NaN), e.g. centralization in a seed
// whose episodes sent no message.

import { ConfigError } from '../errors.js';
import type { MetricSummary } from './summary.js';

/** Mean and sample standard deviation of a list of numbers (sd is NaN below two values). */
export function meanAndSd(values: readonly number[]): { mean: number; sd: number } {
  // Summing deviations from the first value keeps the mean of equal values exact, so their sd is exactly 0.
  const shift = values[0] ?? 0;
  const mean = shift + values.reduce((sum, value) => sum + (value - shift), 0) / values.length;
  const squares = values.reduce((sum, value) => sum + (value - mean) ** 2, 0);
  return { mean, sd: values.length < 2 ? Number.NaN : Math.sqrt(squares / (values.length - 1)) };
}

/**
 * Aggregates one metric's per-seed values (NaN: undefined for that seed) into mean, SE = sd / sqrt(count)
 * over the defined seeds, the count of defined seeds and the per-seed list with NaN written as null.
 */
export function aggregateSeeds(perSeed: readonly number[]): MetricSummary {
  perSeed.forEach((value, index) => {
    if (typeof value !== 'number' || (!Number.isFinite(value) && !Number.isNaN(value))) {
      throw new ConfigError(`aggregateSeeds: perSeed[${index}] is ${String(value)}; expected a finite number, or NaN where the metric is undefined for that seed.`);
    }
  });
  const defined = perSeed.filter((value) => !Number.isNaN(value));
  const { mean, sd } = meanAndSd(defined);
  return {
    mean: defined.length === 0 ? null : mean,
    se: defined.length < 2 ? null : sd / Math.sqrt(defined.length),
    count: defined.length,
    perSeed: perSeed.map((value) => (Number.isNaN(value) ? null : value)),
  };
}
