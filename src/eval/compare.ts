// Paired comparisons between evaluations (Appendix J.1, Tables 8 and 9): for each contrast of a
// config, a two-sided paired t-test on the per-seed values of a − b at one team size, d_z, and
// Bonferroni correction within the contrast's family. Evaluations must share task, problems and seeds.
//
// The default config (no --config) compares every pair of the given evaluations, in the order given, at
// every team size both have, on success, token efficiency, (exploration) room overlap and the task's
// own metrics both declare (Task.metrics, "task.NAME"), leaving out a
// contrast only where fewer than two seeds define the metric in both (e.g. room overlap when no agent
// moved). Families are one per (metric, N): the paper's families split by metric and team size, and
// "tests at different team sizes are pointwise". An explicit config is run as written: a contrast that
// cannot be tested is an error.

import { ConfigError } from '../errors.js';
import type { CompareConfig, ComparisonFamily, ComparisonSpec } from './compare-config.js';
import { correctWithinFamilies } from './statistics/bonferroni.js';
import { pairedTTest } from './statistics/paired-t-test.js';
import { comparedMetricInfo, isExplorationTask, metricAt, summarySizes, TASK_METRIC_PREFIX, type ComparedMetric, type MetricInfo, type MetricName, type Summary } from './summary.js';

/** A loaded summary and the label comparisons use for it (typically its directory). */
export interface Evaluation {
  /** Label in configs, tables and JSON. */
  readonly label: string;
  /** The loaded summary.json. */
  readonly summary: Summary;
}

/** What to compare. */
export interface CompareOptions {
  /** The loaded evaluations; config labels refer to these. */
  readonly evaluations: readonly Evaluation[];
  /** The comparisons to run; default: defaultCompareConfig(evaluations). */
  readonly config?: CompareConfig;
}

/** Which evaluations to check for comparability. */
export interface AssertComparableOptions {
  /** The first evaluation. */
  readonly a: Evaluation;
  /** The second evaluation. */
  readonly b: Evaluation;
}

/** The result of one contrast (effect = a − b, in the metric's own units). */
export interface Comparison {
  /** The Bonferroni family. */
  readonly family: string;
  /** Label of the first evaluation. */
  readonly a: string;
  /** Label of the second evaluation. */
  readonly b: string;
  /** The message ablation each side was evaluated under (`swarm eval --messages`), null for the intact channel. */
  readonly aMessages: string | null;
  readonly bMessages: string | null;
  /** Whether each side ran with Qwen3's thinking mode on (false: `swarm eval --no-thinking`). */
  readonly aThinking: boolean;
  readonly bThinking: boolean;
  /** Team size N. */
  readonly n: number;
  /** The metric compared (a task's own as "task.NAME"). */
  readonly metric: ComparedMetric;
  /** How the metric is named and shown (not in the JSON output: `metric` names it). */
  readonly metricInfo: MetricInfo;
  /** Seeds where both values are defined (the pairs tested). */
  readonly pairs: number;
  /** Mean of a − b over the pairs. */
  readonly meanDiff: number;
  /** Standard error of the mean difference. */
  readonly se: number;
  /** The t statistic (±Infinity or NaN when the differences have zero variance). */
  readonly t: number;
  /** Degrees of freedom, pairs − 1. */
  readonly df: number;
  /** Two-sided p-value. */
  readonly p: number;
  /** Bonferroni-corrected p-value, min(1, p · familySize). */
  readonly pCorrected: number;
  /** Number of contrasts in the family. */
  readonly familySize: number;
  /** Cohen's d_z = meanDiff / sd(differences). */
  readonly dz: number;
}

/** The metrics the default config compares for a task. */
export function defaultComparisonMetrics(task: string): MetricName[] {
  return isExplorationTask(task) ? ['success', 'tokenEfficiency', 'roomOverlap'] : ['success', 'tokenEfficiency'];
}

/** The task's own metrics (Task.metrics) both summaries declare, as compared metrics. */
function sharedTaskMetrics(a: Summary, b: Summary): ComparedMetric[] {
  return Object.keys(a.taskMetrics ?? {})
    .filter((name) => b.taskMetrics?.[name] !== undefined)
    .map((name): ComparedMetric => `${TASK_METRIC_PREFIX}${name}`);
}

/** Every pair of evaluations (in the order given) × every common team size × the main metrics, one family per (metric, N). */
export function defaultCompareConfig(evaluations: readonly Evaluation[]): CompareConfig {
  if (evaluations.length < 2) {
    throw new ConfigError(`swarm compare needs at least two evaluations; got ${evaluations.length}.`);
  }
  const families = new Map<string, ComparisonSpec[]>();
  for (let i = 0; i < evaluations.length; i += 1) {
    for (let j = i + 1; j < evaluations.length; j += 1) {
      const a = evaluations[i];
      const b = evaluations[j];
      assertComparable({ a, b });
      const bSizes = new Set(summarySizes(b.summary));
      const common = summarySizes(a.summary).filter((n) => bSizes.has(n));
      if (common.length === 0) {
        throw new ConfigError(
          `Cannot compare "${a.label}" with "${b.label}": no common team size (${a.label}: ${summarySizes(a.summary).join(', ')}; ${b.label}: ${[...bSizes].join(', ')}).`,
        );
      }
      for (const metric of [...defaultComparisonMetrics(a.summary.task), ...sharedTaskMetrics(a.summary, b.summary)]) {
        for (const n of common) {
          if (definedPairs({ a, b, n, metric }) < 2) continue;
          const name = `${metric} N=${n}`;
          families.set(name, [...(families.get(name) ?? []), { a: a.label, b: b.label, n, metric }]);
        }
      }
    }
  }
  const ordered: ComparisonFamily[] = [...families].map(([name, comparisons]) => ({ name, comparisons }));
  return { families: ordered };
}

/** Throws ConfigError unless a and b evaluated the same task, the same problems and the same seeds (in order). */
export function assertComparable(options: AssertComparableOptions): void {
  const { a, b } = options;
  const refuse = (what: string): never => {
    throw new ConfigError(`Cannot compare "${a.label}" with "${b.label}": ${what}; a paired test needs the same task, problems and seeds.`);
  };
  const [sa, sb] = [a.summary, b.summary];
  if (sa.task !== sb.task) refuse(`task "${sa.task}" vs "${sb.task}"`);
  if (sa.problems.split !== sb.problems.split) refuse(`problems from split "${sa.problems.split}" vs "${sb.problems.split}"`);
  if (sa.problems.count !== sb.problems.count) refuse(`${sa.problems.count} vs ${sb.problems.count} problems`);
  const differing = sa.problems.ids.findIndex((id, index) => id !== sb.problems.ids[index]);
  if (differing >= 0) refuse(`problem ${differing} is "${sa.problems.ids[differing]}" vs "${sb.problems.ids[differing]}"`);
  if (sa.seeds.length !== sb.seeds.length || sa.seeds.some((seed, index) => seed !== sb.seeds[index])) {
    refuse(`seeds [${sa.seeds.join(', ')}] vs [${sb.seeds.join(', ')}]`);
  }
}

function evaluationsByLabel(evaluations: readonly Evaluation[]): Map<string, Evaluation> {
  const byLabel = new Map<string, Evaluation>();
  for (const evaluation of evaluations) {
    const known = byLabel.get(evaluation.label);
    if (known !== undefined && JSON.stringify(known.summary) !== JSON.stringify(evaluation.summary)) {
      throw new ConfigError(`Two different evaluations are labelled "${evaluation.label}"; give each evaluation its own label.`);
    }
    byLabel.set(evaluation.label, evaluation);
  }
  return byLabel;
}

// A contrast between two loaded evaluations.
interface EvaluationContrast {
  readonly a: Evaluation;
  readonly b: Evaluation;
  readonly n: number;
  readonly metric: ComparedMetric;
}

// Per-seed values of both sides where both are defined (a side without the metric at N has none).
function definedValues(contrast: EvaluationContrast): { first: number[]; second: number[] } {
  const key = String(contrast.n);
  const valuesA = metricAt(contrast.a.summary.sizes[key], contrast.metric)?.perSeed ?? [];
  const valuesB = metricAt(contrast.b.summary.sizes[key], contrast.metric)?.perSeed ?? [];
  const first: number[] = [];
  const second: number[] = [];
  valuesA.forEach((value, index) => {
    const other = valuesB[index];
    if (value !== null && other !== null && other !== undefined) {
      first.push(value);
      second.push(other);
    }
  });
  return { first, second };
}

function definedPairs(contrast: EvaluationContrast): number {
  return definedValues(contrast).first.length;
}

// The paired values of a configured contrast; throws ConfigError naming what is missing.
function pairedValues(contrast: EvaluationContrast): { first: number[]; second: number[] } {
  const { a, b, n, metric } = contrast;
  for (const evaluation of [a, b]) {
    const size = evaluation.summary.sizes[String(n)];
    if (size === undefined) {
      throw new ConfigError(`"${evaluation.label}" has no results at N=${n} (sizes: ${summarySizes(evaluation.summary).join(', ')}).`);
    }
    if (metricAt(size, metric) === undefined) throw new ConfigError(`"${evaluation.label}" has no metric "${metric}" at N=${n}.`);
  }
  const values = definedValues(contrast);
  if (values.first.length < 2) {
    throw new ConfigError(
      `Cannot test "${a.label}" vs "${b.label}" on ${metric} at N=${n}: only ${values.first.length} seed(s) define it in both; a paired t-test needs at least 2.`,
    );
  }
  return values;
}

/** Runs every contrast of the config (default: defaultCompareConfig) and corrects p-values within families. */
export function compareEvaluations(options: CompareOptions): Comparison[] {
  const byLabel = evaluationsByLabel(options.evaluations);
  const config = options.config ?? defaultCompareConfig(options.evaluations);
  const resolve = (label: string, field: string): Evaluation => {
    const evaluation = byLabel.get(label);
    if (evaluation === undefined) {
      throw new ConfigError(`Comparison ${field} names "${label}", which is not among the evaluations given: ${[...byLabel.keys()].join(', ')}.`);
    }
    return evaluation;
  };
  const tests = config.families.flatMap((family, familyIndex) =>
    family.comparisons.map((spec, index) => {
      const at = `families[${familyIndex}].comparisons[${index}]`;
      const a = resolve(spec.a, `${at}.a`);
      const b = resolve(spec.b, `${at}.b`);
      assertComparable({ a, b });
      const result = pairedTTest(pairedValues({ a, b, n: spec.n, metric: spec.metric }));
      return {
        family: family.name,
        a: spec.a,
        b: spec.b,
        aMessages: a.summary.messages ?? null,
        bMessages: b.summary.messages ?? null,
        aThinking: a.summary.thinking !== false,
        bThinking: b.summary.thinking !== false,
        n: spec.n,
        metric: spec.metric,
        metricInfo: comparedMetricInfo(a.summary, spec.metric) as MetricInfo,
        pairs: result.pairs,
        meanDiff: result.meanDiff,
        se: result.se,
        t: result.t,
        df: result.df,
        p: result.p,
        dz: result.dz,
      };
    }),
  );
  return correctWithinFamilies(tests, new Map(config.families.flatMap((family) => (family.size === undefined ? [] : [[family.name, family.size] as const]))));
}
