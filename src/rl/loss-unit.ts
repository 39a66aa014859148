// What the learners hand to the loss: episodes as rollouts (the fields of the harness's
// EpisodeResult the learners read, so tests can build them by hand) and loss units. A loss unit
// is what Eq. 3 averages over: the loss averages over the generated tokens of a unit, then over
// units. For the team learners a unit is a team; for the solo learner it is one episode.
import type { AgentSequence } from '../policy/agent-sequence.js';

/** One agent of a rollout: its token history and its own success. */
export interface RolloutAgent {
  readonly sequence: AgentSequence;
  /** Its own success sᵢ (a correct final list, or reaching the exit itself). */
  readonly succeeded: boolean;
}

/** One episode as the learners read it (an EpisodeResult fits). */
export interface RolloutEpisode {
  /** Team success S. */
  readonly teamSuccess: boolean;
  /** Tokens the whole team generated, Σᵢ|τᵢ|. */
  readonly totalTokens: number;
  readonly agents: readonly RolloutAgent[];
}

/** One member of a loss unit with the weight of every token it generated (an advantage, or 1[success] for online SFT). */
export interface LossUnitMember {
  readonly sequence: AgentSequence;
  readonly weight: number;
}

/** A team (or solo episode): its generated tokens are averaged together in the loss. */
export interface LossUnit {
  readonly members: readonly LossUnitMember[];
}

/** The reward settings the learners share. */
export interface RewardSettings {
  /** Per-agent allowance L of Eq. 1: work plus final-answer tokens (agentAllowance, harness/episode-settings.ts). */
  readonly allowance: number;
  /** Token cost λ. */
  readonly tokenCost: number;
  /** ε of Eq. 2. */
  readonly epsilon: number;
}
