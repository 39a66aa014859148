// The evaluation runner's public surface: the Appendix M protocol (runEvaluation), the evaluation
// directory's files (manifest, episode log, traces), and what `swarm
// compare` and `swarm report` do with evaluation directories.

export { compareDirs, compareTable9, type CompareDirsOptions } from './compare-dirs.js';
export { EPISODE_LOG_FILE_NAME, EpisodeLogWriter, readEpisodeLog, type EpisodeLog, type EpisodeRecord } from './episode-log.js';
export { claimEvalDirectory, EVAL_MANIFEST_FILE_NAME, type EvalManifest } from './eval-manifest.js';
export {
  EVAL_PROBLEM_COUNT,
  EVAL_SEED_COUNT,
  EVAL_SIZES,
  episodeSeed,
  evalSeeds,
  MAX_EVAL_SIZE,
  type EpisodeKey,
} from './eval-protocol.js';
export { buildEvaluationReport, defaultReportComparisons, type BuildEvaluationReportOptions, type EvaluationReport } from './evaluation-report.js';
export { findEvaluationDirs, loadEvaluationDirs } from './evaluation-dirs.js';
export { DEFAULT_EVAL_CONCURRENCY, runEvaluation, type EvaluationResult, type RunEvaluationOptions } from './run-evaluation.js';
export { MAX_SAMPLE_GRAPH_SIZE, sampleMessageGraph, type SampleSource } from './sample-message-graphs.js';
export { formatSummaryTable } from './summary-table.js';
export { readTraceFile, traceFilePath, writeTraceFile } from './trace-files.js';
export { runPool, type RunPoolOptions } from './worker-pool.js';
