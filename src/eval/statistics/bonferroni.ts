// Bonferroni correction within named families of tests (Appendix J.1): every test in a family has its
// p-value multiplied by the family's size, capped at 1. All contrasts of a family count toward its size.

import { ConfigError } from '../../errors.js';

/** One p-value and the size of the family it belongs to. */
export interface BonferroniOptions {
  /** The uncorrected p-value (NaN stays NaN). */
  readonly p: number;
  /** Number of tests in the family, ≥ 1. */
  readonly familySize: number;
}

/** A test that belongs to a named family. */
export interface FamilyTest {
  /** The family name. */
  readonly family: string;
  /** The uncorrected p-value. */
  readonly p: number;
}

/** min(1, p · familySize); throws ConfigError when familySize is not a positive integer. */
export function bonferroni(options: BonferroniOptions): number {
  if (!Number.isSafeInteger(options.familySize) || options.familySize < 1) {
    throw new ConfigError(`bonferroni: familySize is ${options.familySize}; expected a positive integer.`);
  }
  return Math.min(1, options.p * options.familySize);
}

/**
 * Adds familySize (tests sharing the family name, or the family's declared size where that is larger:
 * contrasts of a family that were not run still count) and pCorrected to every test.
 */
export function correctWithinFamilies<T extends FamilyTest>(tests: readonly T[], declaredSizes: ReadonlyMap<string, number> = new Map()): (T & { familySize: number; pCorrected: number })[] {
  const sizes = new Map<string, number>();
  for (const test of tests) sizes.set(test.family, (sizes.get(test.family) ?? 0) + 1);
  for (const [family, size] of declaredSizes) if (sizes.has(family)) sizes.set(family, Math.max(size, sizes.get(family) ?? 0));
  return tests.map((test) => {
    const familySize = sizes.get(test.family) ?? 0;
    return { ...test, familySize, pCorrected: bonferroni({ p: test.p, familySize }) };
  });
}
