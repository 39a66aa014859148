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

/** Options of trainSequences. */
export interface TrainSequencesOptions {
  /** K score-centering draws per generated token, read from the pieces (0: none). A piece without draws gives −1 (no draw). */
  readonly draws?: number;
  /** Also give each sequence klWeight: 1/|T_g| · 1/|B| on generated tokens whatever the unit's weight (the KL penalty's token weights). */
  readonly klWeights?: boolean;
}

/** The Trainer.accumulate sequences of a batch of loss units; empty histories are left out. */
export function trainSequences(units: readonly LossUnit[], options: TrainSequencesOptions = {}): TrainSequence[] {
  const K = options.draws ?? 0;
  const batchSize = units.length;
  return units.flatMap((unit) => {
    const unitTokens = unit.members.reduce((sum, member) => sum + member.sequence.sampledCount, 0);
    return unit.members
      .filter((member) => member.sequence.length > 0)
      .map((member) => {
        const tokens = member.sequence.tokens();
        const roles = member.sequence.roles();
        const logprobs = member.sequence.logprobs();
        const tokenShare = unitTokens === 0 ? 0 : 1 / unitTokens / batchSize;
        const perToken = member.weight * tokenShare;
        const coef = new Array<number>(tokens.length - 1).fill(0);
        const oldLogprobs = new Array<number>(tokens.length - 1).fill(0);
        const klWeight = options.klWeights ? new Array<number>(tokens.length - 1).fill(0) : undefined;
        for (let t = 0; t + 1 < tokens.length; t += 1) {
          if (roles[t + 1] !== TOKEN_ROLE_CODE.sampled) continue;
          coef[t] = perToken;
          oldLogprobs[t] = logprobs[t + 1];
          if (klWeight) klWeight[t] = tokenShare;
        }
        const base = { tokens: Array.from(tokens), coef, oldLogprobs, ...(klWeight ? { klWeight } : {}) };
        if (K === 0) return base;
        // draws[t·K + k] is the k-th draw for the prediction of tokens[t+1].
        const drawTokens = new Array<number>(coef.length * K).fill(-1);
        const drawLogprobs = new Array<number>(coef.length * K).fill(0);
        for (const piece of member.sequence.pieces) {
          if (piece.draws === undefined) continue;
          for (let position = piece.start; position < piece.end; position += 1) {
            for (let k = 0; k < K; k += 1) {
              drawTokens[(position - 1) * K + k] = piece.draws.tokens[(position - piece.start) * K + k];
              drawLogprobs[(position - 1) * K + k] = piece.draws.logprobs[(position - piece.start) * K + k];
            }
          }
        }
        return { ...base, draws: { tokens: drawTokens, logprobs: drawLogprobs } };
      });
  });
}
