// The team-relative advantage of Equation 2: A_g = (R_g − mean R) / (std R + ε) over the rewards
// of one group (the G team attempts at a problem; the G·N agents for the individual-reward
// learner; the G·N episodes for the solo learner). The std is the population std (divide by the
// group size, not size − 1), as GRPO implementations compute it. A group whose rewards are all
// equal gets exactly zero advantage (it still counts toward the collection budget).

/** Options of groupAdvantages. */
export interface GroupAdvantageOptions {
  /** ε of Eq. 2. */
  readonly epsilon: number;
}

/** (R_g − mean R) / (population std R + ε) for each reward; zeros when all rewards are equal; throws a RangeError on a non-finite reward. */
export function groupAdvantages(rewards: readonly number[], options: GroupAdvantageOptions): number[] {
  rewards.forEach((reward, index) => {
    if (!Number.isFinite(reward)) throw new RangeError(`groupAdvantages: reward ${index} is ${reward}; every reward must be finite.`);
  });
  if (rewards.every((reward) => reward === rewards[0])) return rewards.map(() => 0);
  const mean = rewards.reduce((sum, reward) => sum + reward, 0) / rewards.length;
  const variance = rewards.reduce((sum, reward) => sum + (reward - mean) ** 2, 0) / rewards.length;
  const scale = Math.sqrt(variance) + options.epsilon;
  return rewards.map((reward) => (reward - mean) / scale);
}
