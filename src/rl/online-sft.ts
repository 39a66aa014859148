// The s³: online SFT control (Table 1, Eq. 9): cross-entropy on the generated tokens of the
// current policy's successful teams, L = −(1/|B|) Σ_g (1/|T_g|) Σ_t 1[team g succeeds] log π_θ.
// Failed teams weigh zero but still count in |B|; an update with no successful team skips the
// optimizer step (and still counts toward the budget).
import type { LossUnit, RolloutEpisode } from './loss-unit.js';

/** The online-SFT batch of an update. */
export interface OnlineSftBatch {
  /** One unit per team, weight 1[team succeeds]. */
  readonly units: LossUnit[];
  /** True when no team succeeded: skip the optimizer step. */
  readonly skipStep: boolean;
}

/** Loss units weighted by team success, and whether the update has nothing to learn from. */
export function onlineSftBatch(episodes: readonly RolloutEpisode[]): OnlineSftBatch {
  return {
    units: episodes.map((episode) => ({
      members: episode.agents.map((agent) => ({ sequence: agent.sequence, weight: episode.teamSuccess ? 1 : 0 })),
    })),
    skipStep: !episodes.some((episode) => episode.teamSuccess),
  };
}
