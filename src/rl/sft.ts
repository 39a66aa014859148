// Supervised fine-tuning on demonstrations (Appendix L, `swarm sft` and the SFT stage of `swarm
// train`): each update packs agent histories into micro-batches of at most maxSequenceTokens tokens
// (sequences never attend across each other), and the loss is the mean negative log-likelihood of
// every sampled (agent-written) token of the update; prompts, tool outputs, notifications and
// messages are context only. Histories are drawn in a seeded shuffled order, epoch after epoch.
import { createRng, type RngSeed } from '../common/random.js';
import { ConfigError } from '../errors.js';
import type { Trainer, TrainSequence } from '../native/trainer.js';
import { TOKEN_ROLE_CODE, type AgentSequence } from '../policy/agent-sequence.js';
import type { SftConfig } from '../config/train-config.js';

/** Cross-entropy sequences: coef[t] = 1/totalSampled where tokens[t+1] was sampled, 0 elsewhere. */
export function sftTrainSequences(histories: readonly AgentSequence[]): TrainSequence[] {
  const totalSampled = histories.reduce((sum, history) => sum + history.sampledCount, 0);
  return histories.map((history) => {
    const tokens = history.tokens();
    const roles = history.roles();
    const coef = new Array<number>(tokens.length - 1).fill(0);
    for (let t = 0; t + 1 < tokens.length; t += 1) if (roles[t + 1] === TOKEN_ROLE_CODE.sampled) coef[t] = 1 / totalSampled;
    return { tokens: Array.from(tokens), coef };
  });
}

/** Splits sequences, in order, into micro-batches of at most maxTokens tokens (a longer sequence is refused). */
export function packByTokens<T extends { readonly tokens: { readonly length: number } }>(sequences: readonly T[], maxTokens: number): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let used = 0;
  for (const sequence of sequences) {
    const length = sequence.tokens.length;
    if (length > maxTokens) throw new ConfigError(`a training sequence of ${length} tokens exceeds the micro-batch limit of ${maxTokens} tokens; raise it.`);
    if (used + length > maxTokens && current.length > 0) {
      batches.push(current);
      current = [];
      used = 0;
    }
    current.push(sequence);
    used += length;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** What one SFT update did. */
export interface SftUpdate {
  /** 1-based update index. */
  readonly update: number;
  /** Mean negative log-likelihood per sampled token. */
  readonly loss: number;
  readonly sampledTokens: number;
  readonly tokens: number;
  readonly gradNorm: number;
  readonly lr: number;
  readonly seconds: number;
}

/** Options of runSft. */
export interface RunSftOptions {
  readonly trainer: Trainer;
  /** The demonstration histories. */
  readonly histories: readonly AgentSequence[];
  readonly config: SftConfig;
  /** Seeds the order histories are drawn in. */
  readonly seed: RngSeed;
  /** Called after every update. */
  readonly onUpdate?: (update: SftUpdate) => void;
}

/** Runs config.updates SFT updates, each over packedSequences micro-batches of ≤ maxSequenceTokens tokens. */
export async function runSft(options: RunSftOptions): Promise<SftUpdate[]> {
  const { trainer, histories, config } = options;
  if (histories.length === 0) throw new ConfigError('SFT needs at least one demonstration history.');
  const rng = createRng(options.seed);
  trainer.setLr(config.learningRate);
  let order: number[] = [];
  let next = 0;
  let epoch = 0;
  const draw = (): AgentSequence => {
    if (next >= order.length) {
      order = rng.fork(`epoch/${epoch}`).shuffle(histories.map((_, index) => index));
      epoch += 1;
      next = 0;
    }
    const history = histories[order[next]];
    next += 1;
    return history;
  };
  const updates: SftUpdate[] = [];
  for (let update = 1; update <= config.updates; update += 1) {
    const started = performance.now();
    // Fill packedSequences micro-batches of at most maxSequenceTokens tokens each.
    const batches: AgentSequence[][] = [];
    for (let b = 0; b < config.packedSequences; b += 1) {
      const batch: AgentSequence[] = [];
      let used = 0;
      for (;;) {
        const history = draw();
        if (history.length > config.maxSequenceTokens) {
          throw new ConfigError(`a demonstration of ${history.length} tokens exceeds sft.maxSequenceTokens ${config.maxSequenceTokens}.`);
        }
        if (used + history.length > config.maxSequenceTokens) {
          next -= 1;
          break;
        }
        batch.push(history);
        used += history.length;
      }
      batches.push(batch);
    }
    const all = batches.flat();
    const sampledTokens = all.reduce((sum, history) => sum + history.sampledCount, 0);
    const sequences = sftTrainSequences(all);
    let loss = 0;
    let at = 0;
    for (const batch of batches) {
      const part = sequences.slice(at, at + batch.length);
      at += batch.length;
      const diagnostics = await trainer.accumulate('sft', part);
      loss += diagnostics.loss;
    }
    const step = trainer.step();
    const record: SftUpdate = {
      update,
      loss,
      sampledTokens,
      tokens: all.reduce((sum, history) => sum + history.length, 0),
      gradNorm: step.gradNorm,
      lr: step.lr,
      seconds: (performance.now() - started) / 1000,
    };
    updates.push(record);
    options.onUpdate?.(record);
  }
  return updates;
}
