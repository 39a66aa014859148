// `swarm compare` without a terminal: loads the evaluation directories given (and those a comparison
// config names, as paths relative to the working directory) and runs the paired comparisons.

import { ConfigError } from '../../errors.js';
import { readCompareConfig, referencedEvaluations } from '../compare-config.js';
import { compareEvaluations, type Comparison } from '../compare.js';
import type { MetricName } from '../summary.js';
import { parseTable9Role, table9Config, type SkippedContrast } from '../table9.js';
import { loadEvaluationDirs } from './evaluation-dirs.js';

/** Options of compareDirs. */
export interface CompareDirsOptions {
  /** Evaluation directories (or folders of them). */
  readonly paths: readonly string[];
  /** A comparison config file (families of contrasts); default: every pair on the main metrics. */
  readonly configPath?: string;
}

/** `swarm compare --family table9 --as ROLE=DIR ...`: Table 9's families over the evaluations given by role. */
export async function compareTable9(roles: readonly string[]): Promise<{ comparisons: Comparison[]; skipped: SkippedContrast[] }> {
  const parsed = roles.map((text) => parseTable9Role(text));
  const loaded = await loadEvaluationDirs(parsed.map((entry) => entry.dir));
  if (loaded.length !== parsed.length) throw new ConfigError('--as: give each role one evaluation directory (a folder of several is ambiguous).');
  const evaluations = loaded.map((evaluation, index) => ({
    role: parsed[index].role,
    label: evaluation.label,
    task: evaluation.summary.task,
    has: (n: number, metric: MetricName) => evaluation.summary.sizes[String(n)]?.[metric] !== undefined,
  }));
  const { config, skipped } = table9Config(evaluations);
  return { comparisons: compareEvaluations({ evaluations: loaded, config }), skipped };
}

/** Loads the evaluations and compares them; labels are the directories. */
export async function compareDirs(options: CompareDirsOptions): Promise<Comparison[]> {
  if (options.configPath === undefined) {
    const evaluations = await loadEvaluationDirs(options.paths);
    if (evaluations.length < 2) throw new ConfigError(`swarm compare needs at least two evaluation directories; got ${evaluations.length}.`);
    return compareEvaluations({ evaluations });
  }
  const config = await readCompareConfig(options.configPath);
  const given = options.paths.length === 0 ? [] : await loadEvaluationDirs(options.paths);
  const known = new Set(given.map((evaluation) => evaluation.label));
  const referenced = await loadEvaluationDirs(referencedEvaluations(config).filter((label) => !known.has(label)));
  return compareEvaluations({ evaluations: [...given, ...referenced], config });
}
