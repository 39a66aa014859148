// What one update trains on, per learner of Table 1: the loss units of the update's groups (Eq. 3),
// the loss kind the Trainer computes, and whether the optimizer step is skipped.
//   s3, no-comm   team reward (Eq. 1), advantage within the G attempts (Eq. 2), unit = team; PG.
//   individual    own success × the team's cost factor, advantage over the G·N agents; unit = team; PG.
//   online-sft    cross-entropy on the tokens of successful teams (Eq. 9); no team succeeded: skip.
//   solo          team reward of single-agent episodes, advantage over the G·N episodes; unit = episode; PG.
import type { Learner } from '../config/train-config.js';
import { individualLossUnits } from './individual-reward.js';
import type { LossUnit, RewardSettings, RolloutEpisode } from './loss-unit.js';
import { onlineSftBatch } from './online-sft.js';
import { teamLossUnits } from './team-loss-units.js';

/** The loss of one update. */
export interface LearnerBatch {
  readonly units: LossUnit[];
  /** 'pg': the IcePop-masked policy gradient; 'sft': weighted cross-entropy. */
  readonly kind: 'pg' | 'sft';
  /** True when the update has nothing to learn from (online SFT without a successful team). */
  readonly skipStep: boolean;
  /** Groups whose rewards were all equal (zero advantage everywhere). */
  readonly zeroAdvantageGroups: number;
}

/** Builds the update's loss units from its groups (episodes grouped by problem). */
export function learnerBatch(learner: Learner, groups: readonly (readonly RolloutEpisode[])[], settings: RewardSettings): LearnerBatch {
  switch (learner) {
    case 's3':
    case 'no-comm':
    case 'solo': {
      const units = teamLossUnits({ ...settings, groups });
      return { units, kind: 'pg', skipStep: false, zeroAdvantageGroups: countZeroGroups(units, groups) };
    }
    case 'individual': {
      const units = individualLossUnits({ ...settings, groups });
      return { units, kind: 'pg', skipStep: false, zeroAdvantageGroups: countZeroGroups(units, groups) };
    }
    case 'online-sft': {
      const batch = onlineSftBatch(groups.flat());
      const zero = groups.filter((group) => group.every((episode) => episode.teamSuccess === group[0].teamSuccess)).length;
      return { units: batch.units, kind: 'sft', skipStep: batch.skipStep, zeroAdvantageGroups: zero };
    }
  }
}

function countZeroGroups(units: readonly LossUnit[], groups: readonly (readonly RolloutEpisode[])[]): number {
  let at = 0;
  let zero = 0;
  for (const group of groups) {
    const mine = units.slice(at, at + group.length);
    at += group.length;
    if (mine.every((unit) => unit.members.every((member) => member.weight === 0))) zero += 1;
  }
  return zero;
}
