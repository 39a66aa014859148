// The s³: individual reward control (Table 1, Appendix C): each agent's reward is its own success
// sᵢ times its team's token-cost factor (Eq. 1), advantages are normalized over all G·N agents
// attempting the problem, and the loss unit is still the team (Table 5).
import { groupAdvantages } from './group-advantage.js';
import type { LossUnit, RewardSettings, RolloutEpisode } from './loss-unit.js';
import { tokenCostFactor } from './token-cost.js';

/** What individualLossUnits reads. */
export interface IndividualLossUnitsOptions extends RewardSettings {
  /** Episodes grouped by problem. */
  readonly groups: readonly (readonly RolloutEpisode[])[];
}

/** sᵢ · (1 − λ · min(1, Σⱼ|τⱼ| / (N·L))) for each agent of the episode. */
export function individualRewards(episode: RolloutEpisode, settings: Omit<RewardSettings, 'epsilon'>): number[] {
  const factor = tokenCostFactor({
    generatedTokens: episode.totalTokens,
    teamSize: episode.agents.length,
    allowance: settings.allowance,
    tokenCost: settings.tokenCost,
  });
  return episode.agents.map((agent) => (agent.succeeded ? factor : 0));
}

/** One unit per team; each agent weighted by its own advantage among the problem's G·N agents. */
export function individualLossUnits(options: IndividualLossUnitsOptions): LossUnit[] {
  return options.groups.flatMap((group) => {
    const rewards = group.map((episode) => individualRewards(episode, options));
    const advantages = groupAdvantages(rewards.flat(), options);
    let next = 0;
    return group.map((episode) => ({
      members: episode.agents.map((agent) => {
        const weight = advantages[next];
        next += 1;
        return { sequence: agent.sequence, weight };
      }),
    }));
  });
}
