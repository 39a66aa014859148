// From per-episode metrics to one team size's entry of summary.json (Appendix M "Statistics"): each
// seed's value is a mean over that seed's problems (failures included; episodes where a metric is
// undefined are skipped, and a seed with none is undefined), then mean and SE over the seeds. Token
// efficiency per seed is SR · N·L / T̄ from that seed's solve rate and mean team tokens.
//
// Which metrics a size carries: the required ones always; room overlap and success by exit door for
// exploration; with messaging on, the message analyses (deliveries, Gini of sends, reads before the
// first send) and the task's own (aggregation: number shares and structure classes; exploration:
// duplicate claims and false "exhausted" reports). Without messaging they would all be zero or
// undefined, so they are left out. A task's own metrics (Task.metrics) go under `taskMetrics`, the
// messaging-only ones only with messaging on.

import { ConfigError } from '../../errors.js';
import { findTask } from '../../tasks/index.js';
import { aggregateSeeds } from '../seed-aggregate.js';
import { isAggregationTask, isExplorationTask, STRUCTURE_CLASSES, type MetricName, type MetricSummary, type SizeSummary, type StructureClass } from '../summary.js';
import type { EpisodeMetrics } from './episode-metrics.js';

/** Options of summarizeSize. */
export interface SummarizeSizeOptions {
  /** Task name (decides the task's metrics). */
  readonly task: string;
  /** Team size N. */
  readonly n: number;
  /** L of token efficiency's N·L: work plus final-answer allowance per agent (agentAllowance, harness/episode-settings.ts). */
  readonly tokensPerAgent: number;
  /** Whether messaging was on. */
  readonly communication: boolean;
  /** The episodes of each seed (one per problem), in the order of the summary's seeds. */
  readonly episodesBySeed: readonly (readonly EpisodeMetrics[])[];
}

/** Mean of the defined values; NaN when none is defined. */
export function definedMean(values: readonly (number | null)[]): number {
  const defined = values.filter((value): value is number => value !== null);
  return defined.length === 0 ? Number.NaN : defined.reduce((total, value) => total + value, 0) / defined.length;
}

type NumericField = {
  [K in keyof EpisodeMetrics]-?: EpisodeMetrics[K] extends number | null ? K : never;
}[keyof EpisodeMetrics];

/** Builds the summary of one team size from its episodes, seed by seed. */
export function summarizeSize(options: SummarizeSizeOptions): SizeSummary {
  const { n, tokensPerAgent, episodesBySeed } = options;
  episodesBySeed.forEach((episodes, index) => {
    if (episodes.length === 0) throw new ConfigError(`summarizeSize: seed ${index} at N=${n} has no episodes; every seed needs its problems.`);
  });
  const perSeed = (value: (episodes: readonly EpisodeMetrics[]) => number): MetricSummary => aggregateSeeds(episodesBySeed.map(value));
  const mean = (field: NumericField): MetricSummary => perSeed((episodes) => definedMean(episodes.map((episode) => episode[field])));
  const solveRate = (episodes: readonly EpisodeMetrics[]): number => definedMean(episodes.map((episode) => (episode.success ? 1 : 0)));
  const meanTokens = (episodes: readonly EpisodeMetrics[]): number => definedMean(episodes.map((episode) => episode.tokens));

  const size: Partial<Record<MetricName, MetricSummary>> & {
    structures?: Record<StructureClass, MetricSummary>;
    successByExitDoor?: Record<string, MetricSummary>;
    taskMetrics?: Record<string, MetricSummary>;
  } = {
    success: perSeed(solveRate),
    tokens: perSeed(meanTokens),
    tokenEfficiency: perSeed((episodes) => {
      const tokens = meanTokens(episodes);
      return tokens > 0 ? (solveRate(episodes) * n * tokensPerAgent) / tokens : Number.NaN;
    }),
    messageCalls: mean('messageCalls'),
    centralization: mean('centralization'),
    reciprocity: mean('reciprocity'),
  };
  const exploration = isExplorationTask(options.task);
  const aggregation = isAggregationTask(options.task);
  if (exploration) {
    size.roomOverlap = mean('roomOverlap');
    const doors = [...new Set(episodesBySeed.flat().map((episode) => episode.exitDoor))].filter((door): door is number => door !== null);
    size.successByExitDoor = Object.fromEntries(
      doors.sort((x, y) => x - y).map((door) => [String(door), perSeed((episodes) => solveRate(episodes.filter((episode) => episode.exitDoor === door)))]),
    );
  }
  if (options.communication) {
    size.deliveries = mean('deliveries');
    size.weightedReciprocity = mean('weightedReciprocity');
    size.sendGini = mean('sendGini');
    size.readBeforeFirstSendShare = mean('readBeforeFirstSendShare');
    size.readBeforeSendShare = mean('readBeforeSendShare');
    if (aggregation) {
      size.numbersSentShare = mean('numbersSentShare');
      size.numbersSentAndReadShare = mean('numbersSentAndReadShare');
      size.structures = Object.fromEntries(
        STRUCTURE_CLASSES.map((name) => [name, perSeed((episodes) => definedMean(episodes.map((episode) => (episode.structure === name ? 1 : 0))))]),
      ) as Record<StructureClass, MetricSummary>;
    }
    if (exploration) {
      size.duplicateClaims = mean('duplicateClaims');
      size.falseExhaustedReports = mean('falseExhaustedReports');
      size.falseReportReadTeams = mean('falseReportRead');
      size.falseReportShare = mean('falseReportShare');
    }
  }
  const own = (findTask(options.task)?.metrics ?? []).filter((metric) => options.communication || metric.messagingOnly !== true);
  if (own.length > 0) {
    size.taskMetrics = Object.fromEntries(
      own.map((metric) => [metric.name, perSeed((episodes) => definedMean(episodes.map((episode) => episode.taskMetrics?.[metric.name] ?? null)))]),
    );
  }
  return size as SizeSummary;
}
