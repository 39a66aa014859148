// The summary.json format (schemaVersion 1) that `swarm eval` writes and `swarm compare` and
// `swarm report` read: types, metric names and what each metric means. docs/summary-format.md is the
// reader's description of the same format; summary-validation.ts checks files against it.

import { taskFamily } from '../tasks/index.js';
import type { Split, TaskMetric } from '../tasks/task.js';

/** The version written into every summary.json; readers refuse other versions. */
export const SUMMARY_SCHEMA_VERSION = 1;

/** One metric at one team size: mean and standard error over the seeds where it is defined. */
export interface MetricSummary {
  /** Mean of the defined per-seed values; null when no seed defines the metric. */
  readonly mean: number | null;
  /** Sample standard deviation of the defined per-seed values / sqrt(count); null when count < 2. */
  readonly se: number | null;
  /** How many seeds define the metric (non-null perSeed entries). */
  readonly count: number;
  /** One value per evaluation seed, in the order of Summary.seeds; null where undefined for that seed. */
  readonly perSeed: readonly (number | null)[];
}

/** Whether a metric is a share in [0, 1] or a non-negative amount. */
export type MetricRange = 'fraction' | 'nonNegative';

/** How a metric is named, bounded and shown. */
export interface MetricInfo {
  /** Short name for plots and tables. */
  readonly label: string;
  /** The values a per-seed entry may take. */
  readonly range: MetricRange;
  /** Shown as percent (plots) and its differences as percentage points (comparison tables). */
  readonly percent: boolean;
}

/** Metrics every size of every summary has (Appendix M). */
export const REQUIRED_METRICS = ['success', 'tokens', 'tokenEfficiency', 'messageCalls', 'centralization', 'reciprocity'] as const;

/** Metrics every size of an exploration summary has (Appendix M, room overlap). */
export const EXPLORATION_METRICS = ['roomOverlap'] as const;

/** Metrics a summary may carry (Appendix M and K analyses). */
export const OPTIONAL_METRICS = [
  'deliveries',
  'weightedReciprocity',
  'sendGini',
  'readBeforeFirstSendShare',
  'readBeforeSendShare',
  'numbersSentShare',
  'numbersSentAndReadShare',
  'duplicateClaims',
  'falseExhaustedReports',
  'falseReportReadTeams',
  'falseReportShare',
] as const;

/** A metric that is required everywhere. */
export type RequiredMetric = (typeof REQUIRED_METRICS)[number];
/** A metric that only exploration summaries require. */
export type ExplorationMetric = (typeof EXPLORATION_METRICS)[number];
/** A metric a summary may leave out. */
export type OptionalMetric = (typeof OPTIONAL_METRICS)[number];
/** Any plain metric name (the keys of a SizeSummary holding one MetricSummary). */
export type MetricName = RequiredMetric | ExplorationMetric | OptionalMetric;

/** Every plain metric name, required ones first. */
export const METRIC_NAMES: readonly MetricName[] = [...REQUIRED_METRICS, ...EXPLORATION_METRICS, ...OPTIONAL_METRICS];

/** Names, ranges and display of every plain metric. */
export const METRIC_INFO: Readonly<Record<MetricName, MetricInfo>> = {
  success: { label: 'Success', range: 'fraction', percent: true },
  tokens: { label: 'Tokens per team', range: 'nonNegative', percent: false },
  tokenEfficiency: { label: 'Token efficiency', range: 'nonNegative', percent: false },
  messageCalls: { label: 'Message calls per team', range: 'nonNegative', percent: false },
  centralization: { label: 'Centralization', range: 'fraction', percent: false },
  reciprocity: { label: 'Reciprocity', range: 'fraction', percent: false },
  roomOverlap: { label: 'Room overlap', range: 'fraction', percent: false },
  deliveries: { label: 'Deliveries per team', range: 'nonNegative', percent: false },
  sendGini: { label: 'Gini of sends', range: 'fraction', percent: false },
  weightedReciprocity: { label: 'Weighted reciprocity', range: 'fraction', percent: false },
  readBeforeFirstSendShare: { label: 'Read before first send (senders)', range: 'fraction', percent: false },
  readBeforeSendShare: { label: 'Read before sending own number', range: 'fraction', percent: true },
  numbersSentShare: { label: 'Numbers sent', range: 'fraction', percent: false },
  numbersSentAndReadShare: { label: 'Numbers sent and read', range: 'fraction', percent: false },
  duplicateClaims: { label: 'Duplicate claims per team', range: 'nonNegative', percent: false },
  falseExhaustedReports: { label: 'False exhausted reports per team', range: 'nonNegative', percent: false },
  falseReportReadTeams: { label: 'Teams that read a false report', range: 'fraction', percent: true },
  falseReportShare: { label: 'Share of reports that are false', range: 'fraction', percent: true },
};

/** The communication structure classes of an aggregation team (Appendix K.1), in display order. */
export const STRUCTURE_CLASSES = ['silentAgent', 'conversation', 'repeatedBroadcasts', 'oneBroadcastEach'] as const;

/** One communication structure class. */
export type StructureClass = (typeof STRUCTURE_CLASSES)[number];

/** Display names of the structure classes (the paper's wording). */
export const STRUCTURE_CLASS_LABELS: Readonly<Record<StructureClass, string>> = {
  silentAgent: 'An agent never messages',
  conversation: 'Conversation',
  repeatedBroadcasts: 'Repeated broadcasts',
  oneBroadcastEach: 'One broadcast each',
};

/** Everything measured at one team size N. */
export type SizeSummary = { readonly [M in RequiredMetric]: MetricSummary } & {
  readonly [M in ExplorationMetric | OptionalMetric]?: MetricSummary;
} & {
  /** Share of episodes in each structure class (aggregation). */
  readonly structures?: Readonly<Record<StructureClass, MetricSummary>>;
  /** Success among problems whose exit is behind door k ("0", "1", ...) at the first fork (exploration). */
  readonly successByExitDoor?: Readonly<Record<string, MetricSummary>>;
  /** The task's own metrics (Task.metrics), by name. */
  readonly taskMetrics?: Readonly<Record<string, MetricSummary>>;
};

/** The policy a summary evaluated. */
export interface SummaryPolicy {
  /** Short name for legends and tables, e.g. "s3" or "Solo (SFT+RL)". */
  readonly name: string;
  /** Free text: learner, update, base model, anything a reader needs. */
  readonly description: string;
  /** The checkpoint directory evaluated; null for a scripted policy. */
  readonly model: string | null;
}

/** The problem set a summary evaluated. */
export interface SummaryProblems {
  /** Which split the problems come from. */
  readonly split: Split;
  /** How many problems each seed attempted at each size. */
  readonly count: number;
  /** The problem ids, in evaluation order (count entries). */
  readonly ids: readonly string[];
}

/** Token allowance per agent. */
export interface SummaryAllowance {
  /** L, the per-agent allowance that token efficiency's N·L uses. */
  readonly tokensPerAgent: number;
  /** Extra tokens each agent may spend on its final answer (aggregation 1,024; exploration 1). */
  readonly finalAnswerTokens: number;
}

/** The contents of one summary.json. */
export interface Summary {
  /** Always SUMMARY_SCHEMA_VERSION. */
  readonly schemaVersion: typeof SUMMARY_SCHEMA_VERSION;
  /** Task registry name, e.g. "aggregation" or "exploration". */
  readonly task: string;
  /** The policy evaluated. */
  readonly policy: SummaryPolicy;
  /** Whether the messaging tools were on (false: agents search independently, best-of-N). */
  readonly comm: boolean;
  /** Evaluation seeds, in the order of every perSeed array. */
  readonly seeds: readonly number[];
  /** The problems attempted. */
  readonly problems: SummaryProblems;
  /** Token allowance per agent. */
  readonly allowance: SummaryAllowance;
  /** Sampling temperature. */
  readonly temperature: number;
  /** A message ablation (`swarm eval --messages`: drop, shuffle, delay:K, truncate:T); absent for the intact channel. */
  readonly messages?: string;
  /** false: Qwen3's thinking mode off (`swarm eval --no-thinking`); absent when on. */
  readonly thinking?: false;
  /** How the task's own metrics (Task.metrics; each size's `taskMetrics`) are named, bounded and shown; absent for a task without any. */
  readonly taskMetrics?: Readonly<Record<string, MetricInfo>>;
  /** When the summary was written (ISO 8601). */
  readonly createdAt: string;
  /** The s3-swarm package version that wrote it. */
  readonly packageVersion: string;
  /** Results by team size N (keys are decimal integers, e.g. "4"). */
  readonly sizes: Readonly<Record<string, SizeSummary>>;
}

/** A metric a comparison may test: a plain metric, or one of the task's own as "task.NAME". */
export type ComparedMetric = MetricName | `task.${string}`;

/** The prefix naming a task's own metric in comparisons ("task.agentAccuracy"). */
export const TASK_METRIC_PREFIX = 'task.';

/** A compared metric's summary at one size, or undefined where the size has none. */
export function metricAt(size: SizeSummary | undefined, metric: ComparedMetric): MetricSummary | undefined {
  if (size === undefined) return undefined;
  return metric.startsWith(TASK_METRIC_PREFIX) ? size.taskMetrics?.[metric.slice(TASK_METRIC_PREFIX.length)] : size[metric as MetricName];
}

/** How a compared metric is shown: METRIC_INFO, or the summary's declaration of a task metric; undefined when the summary declares no such metric. */
export function comparedMetricInfo(summary: Summary, metric: ComparedMetric): MetricInfo | undefined {
  if (!metric.startsWith(TASK_METRIC_PREFIX)) return Object.hasOwn(METRIC_INFO, metric) ? METRIC_INFO[metric as MetricName] : undefined;
  return summary.taskMetrics?.[metric.slice(TASK_METRIC_PREFIX.length)];
}

/** The MetricInfo a summary records for each of a task's own metrics; undefined for a task without any. */
export function taskMetricInfo(metrics: readonly TaskMetric[] | undefined): Record<string, MetricInfo> | undefined {
  if (metrics === undefined || metrics.length === 0) return undefined;
  return Object.fromEntries(metrics.map((metric) => [metric.name, { label: metric.label, range: metric.range, percent: metric.percent === true }]));
}

/** Whether a task is measured as the paper's exploration (Task.family; its summaries require roomOverlap). */
export function isExplorationTask(task: string): boolean {
  return taskFamily(task) === 'exploration';
}

/** Whether a task is measured as the paper's aggregation (Task.family: structures and number-sharing shares). */
export function isAggregationTask(task: string): boolean {
  return taskFamily(task) === 'aggregation';
}

/** The team sizes of a summary, ascending. */
export function summarySizes(summary: Summary): number[] {
  return Object.keys(summary.sizes)
    .map(Number)
    .sort((x, y) => x - y);
}
