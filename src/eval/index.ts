// The evaluation layer's public surface: the summary.json format, seed aggregation, statistics, paired
// comparisons and their tables, the HTML report and the progress bar.

export * from './summary.js';
export { aggregateSeeds, meanAndSd } from './seed-aggregate.js';
export { validateSummary, type ValidateSummaryOptions } from './summary-validation.js';
export { readSummary, writeSummary, SUMMARY_FILE_NAME } from './summary-file.js';
export * from './statistics/index.js';
export {
  parseCompareConfig,
  readCompareConfig,
  referencedEvaluations,
  type CompareConfig,
  type ComparisonFamily,
  type ComparisonSpec,
  type ParseCompareConfigOptions,
} from './compare-config.js';
export {
  assertComparable,
  compareEvaluations,
  defaultCompareConfig,
  defaultComparisonMetrics,
  type AssertComparableOptions,
  type CompareOptions,
  type Comparison,
  type Evaluation,
} from './compare.js';
export {
  COMPARISON_COLUMNS,
  comparisonCells,
  comparisonsJson,
  formatComparisonTable,
  formatPValue,
  formatStatistic,
  SIGNIFICANCE_LEVEL,
  type ComparisonCells,
  type ComparisonJson,
} from './comparison-table.js';
export * from './report/index.js';
export { createProgress, type Progress, type ProgressOptions } from './progress.js';
