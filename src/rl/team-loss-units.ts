// Loss units of the team learners (s³ and s³ − communication) and of the solo learner: each
// episode gets the team reward of Eq. 1, advantages are normalized within each group (the G
// attempts at a problem; for the solo learner, the G·N single-agent episodes at a problem), and
// every member of an episode gets its episode's advantage. One unit per episode.
import { groupAdvantages } from './group-advantage.js';
import type { LossUnit, RewardSettings, RolloutEpisode } from './loss-unit.js';
import { teamReward } from './team-reward.js';

/** What teamLossUnits reads. */
export interface TeamLossUnitsOptions extends RewardSettings {
  /** Episodes grouped by problem. */
  readonly groups: readonly (readonly RolloutEpisode[])[];
}

/** The team reward of each episode, with N its number of agents. */
export function episodeRewards(episodes: readonly RolloutEpisode[], settings: RewardSettings): number[] {
  return episodes.map((episode) =>
    teamReward({
      success: episode.teamSuccess,
      generatedTokens: episode.totalTokens,
      teamSize: episode.agents.length,
      allowance: settings.allowance,
      tokenCost: settings.tokenCost,
    }),
  );
}

/** One unit per episode, every member weighted by its episode's group-relative advantage. */
export function teamLossUnits(options: TeamLossUnitsOptions): LossUnit[] {
  return options.groups.flatMap((group) => {
    const advantages = groupAdvantages(episodeRewards(group, options), options);
    return group.map((episode, g) => ({ members: episode.agents.map((agent) => ({ sequence: agent.sequence, weight: advantages[g] })) }));
  });
}
