// The statistics of the evaluation protocol: paired t-tests with d_z, and Bonferroni correction.

export { pairedTTest, twoSidedPValue, type PairedTTestOptions, type PairedTTestResult, type TwoSidedPValueOptions } from './paired-t-test.js';
export { bonferroni, correctWithinFamilies, type BonferroniOptions, type FamilyTest } from './bonferroni.js';
