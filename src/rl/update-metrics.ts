// The rollout side of one update's metrics.jsonl line: reward, success, tokens, token efficiency,
// messages and (aggregation) communication-structure shares over the update's episodes, measured
// with the evaluation's own per-episode metrics so training curves and evaluations agree.
import { measureEpisode } from '../eval/metrics/episode-metrics.js';
import { definedMean } from '../eval/metrics/size-summary.js';
import { STRUCTURE_CLASSES, type StructureClass } from '../eval/summary.js';
import { splitEpisodes } from '../harness/trace.js';
import type { RolloutGroup } from './collector.js';
import { episodeRewards } from './team-loss-units.js';
import type { RewardSettings } from './loss-unit.js';

/** Rollout metrics of one update. */
export interface RolloutMetrics {
  readonly episodes: number;
  /** Mean team reward (Eq. 1). */
  readonly reward: number;
  /** Share of successful episodes. */
  readonly success: number;
  /** Mean tokens generated per episode (whole team). */
  readonly tokens: number;
  /** SR · N·L / T̄ (Appendix M). */
  readonly tokenEfficiency: number;
  /** Mean message calls per episode. */
  readonly messages: number;
  /** Share of episodes in each communication structure class (aggregation with messaging); null otherwise. */
  readonly structure: Readonly<Record<StructureClass, number>> | null;
  /** Share of agents that checked their inbox before sending their own number (Fig. 6b, App. K.2), over the episodes with N ≥ 2; null without. */
  readonly readBeforeSend: number | null;
  /** Exploration with messaging (App. K.3): share of teams in which some agent read a false "exhausted" report; null otherwise. */
  readonly falseReportReadTeams: number | null;
  /** Exploration with messaging: share of reports that are false, over the episodes with reports; null without. */
  readonly falseReportShare: number | null;
}

/** Measures the episodes of an update's groups. */
export function rolloutMetrics(groups: readonly RolloutGroup[], settings: RewardSettings): RolloutMetrics {
  const episodes = groups.flatMap((group) => group.episodes.map((episode) => ({ episode, problem: group.problem })));
  const rewards = episodeRewards(
    episodes.map((e) => e.episode),
    settings,
  );
  const measured = episodes.map(({ episode, problem }) => measureEpisode({ episode: splitEpisodes(episode.trace)[0], problem }));
  const count = Math.max(1, episodes.length);
  const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / count;
  const success = mean(measured.map((m) => (m.success ? 1 : 0)));
  const tokens = mean(measured.map((m) => m.tokens));
  const n = episodes.length === 0 ? 1 : episodes[0].episode.agents.length;
  const classes = measured.map((m) => m.structure).filter((s): s is StructureClass => s !== null);
  const structure =
    classes.length === 0
      ? null
      : (Object.fromEntries(STRUCTURE_CLASSES.map((name) => [name, classes.filter((c) => c === name).length / classes.length])) as Record<StructureClass, number>);
  // Mean of the episodes where a measure is defined; null where none is.
  const meanOfDefined = (values: readonly (number | null)[]): number | null => {
    const mean = definedMean(values);
    return Number.isNaN(mean) ? null : mean;
  };
  const messaging = episodes.some((e) => e.episode.communication);
  return {
    episodes: episodes.length,
    reward: mean(rewards),
    success,
    tokens,
    tokenEfficiency: tokens > 0 ? (success * n * settings.allowance) / tokens : 0,
    messages: mean(measured.map((m) => m.messageCalls)),
    structure,
    readBeforeSend: messaging ? meanOfDefined(measured.map((m) => m.readBeforeSendShare)) : null,
    falseReportReadTeams: messaging ? meanOfDefined(measured.map((m) => m.falseReportRead)) : null,
    falseReportShare: messaging ? meanOfDefined(measured.map((m) => m.falseReportShare)) : null,
  };
}
