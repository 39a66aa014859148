// The per-token loss coefficients for the native Trainer (Eq. 3, Algorithm 1 lines 10 and 12):
// every generated ('sampled') token of every member of unit g gets weight_g · 1/|T_g| · 1/|B|,
// with |T_g| the generated tokens of the whole unit and |B| the number of units, so the loss
// averages within a team and then over teams and chattier teams get no extra weight. Context tokens
// get 0. Trainer.accumulate reads coef[t] as the weight of log p(tokens[t+1] | tokens[0..t]), so
// the coefficient of a token at position t+1 sits at index t and coef has one entry fewer than
// tokens; oldLogprobs[t] is the sampler's log-prob of tokens[t+1] (0 where coef is 0). Units with
// zero weight still yield their sequences (all coefficients 0).
import type { TrainSequence } from '../native/trainer.js';
import { TOKEN_ROLE_CODE } from '../policy/agent-sequence.js';
import type { LossUnit } from './loss-unit.js';

/** The Trainer.accumulate sequences of a batch of loss units; empty histories are left out. */
export function trainSequences(units: readonly LossUnit[]): TrainSequence[] {
  const batchSize = units.length;
  return units.flatMap((unit) => {
    const unitTokens = unit.members.reduce((sum, member) => sum + member.sequence.sampledCount, 0);
    return unit.members
      .filter((member) => member.sequence.length > 0)
      .map((member) => {
        const tokens = member.sequence.tokens();
        const roles = member.sequence.roles();
        const logprobs = member.sequence.logprobs();
        const perToken = unitTokens === 0 ? 0 : member.weight / unitTokens / batchSize;
        const coef = new Array<number>(tokens.length - 1).fill(0);
        const oldLogprobs = new Array<number>(tokens.length - 1).fill(0);
        for (let t = 0; t + 1 < tokens.length; t += 1) {
          if (roles[t + 1] !== TOKEN_ROLE_CODE.sampled) continue;
          coef[t] = perToken;
          oldLogprobs[t] = logprobs[t + 1];
        }
        return { tokens: Array.from(tokens), coef, oldLogprobs };
      });
  });
}
