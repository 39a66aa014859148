// Supervised fine-tuning on demonstrations (Appendix L, `swarm sft` and the SFT stage of `swarm
// train`): each update packs agent histories into micro-batches of at most maxSequenceTokens tokens
// (sequences never attend across each other), and the loss is the mean negative log-likelihood of
// every sampled (agent-written) token of the update; prompts, tool outputs, notifications and
// messages are context only. Histories are drawn in a seeded shuffled order, epoch after epoch.
// Excerpts (ours, for small models trained from scratch) are histories from their first user turn
// on: the system turn, most of an agent's prompt and the same in every history, is cut, so an
// update of the same size holds about twice the agent-written turns.
import { createRng, type Rng, type RngSeed } from '../common/random.js';
import { ConfigError } from '../errors.js';
import type { Trainer, TrainSequence } from '../native/trainer.js';
import { TrainerGroup } from '../distributed/trainer-group.js';
import { TOKEN_ROLE_CODE, type AgentSequence } from '../policy/agent-sequence.js';
import type { SftConfig } from '../config/train-config.js';

/** What SFT reads of a history: its tokens and their roles (an AgentSequence, or an excerpt of one). */
export type SftHistory = Pick<AgentSequence, 'length' | 'sampledCount' | 'tokens' | 'roles'>;

/** Which histories an SFT update trained on. */
export type SftHistoryKind = 'whole' | 'excerpts';

/**
 * The history from its second turn on (the first user turn), i.e. without the system turn; the whole
 * history when it has fewer than two turns. `turnStartId` is the tokenizer's id of <|im_start|>. The
 * system turn holds no sampled token, so the excerpt keeps every supervised token.
 */
export function withoutSystemTurn(history: AgentSequence, turnStartId: number): SftHistory {
  const tokens = history.tokens();
  let turns = 0;
  let cut = 0;
  for (let index = 0; index < tokens.length; index += 1) {
    if (tokens[index] === turnStartId && ++turns === 2) {
      cut = index;
      break;
    }
  }
  const kept = tokens.slice(cut);
  const roles = history.roles().slice(cut);
  return { length: kept.length, sampledCount: history.sampledCount, tokens: () => kept.slice(), roles: () => roles.slice() };
}

/** Cross-entropy sequences: coef[t] = 1/totalSampled where tokens[t+1] was sampled, 0 elsewhere. */
export function sftTrainSequences(histories: readonly SftHistory[]): TrainSequence[] {
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
  /** Whole histories or excerpts. */
  readonly histories: SftHistoryKind;
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
  /** Data-parallel SFT: the trainer's group (rank 0 is `trainer`; micro-batch i goes to rank i mod R); absent: the trainer alone. */
  readonly group?: TrainerGroup;
  /** The demonstration histories. */
  readonly histories: readonly AgentSequence[];
  readonly config: SftConfig;
  /** The tokenizer's id of <|im_start|> (needed when config.excerptUpdates > 0, to cut the system turn). */
  readonly turnStartId?: number;
  /** Seeds the order histories are drawn in. */
  readonly seed: RngSeed;
  /** Called after every update. */
  readonly onUpdate?: (update: SftUpdate) => void;
}

/**
 * Runs config.excerptUpdates updates on excerpts (histories without their system turn), then
 * config.updates on whole histories, each over packedSequences micro-batches of ≤ maxSequenceTokens
 * tokens; updates are numbered 1.. across both.
 */
export async function runSft(options: RunSftOptions): Promise<SftUpdate[]> {
  const { histories, config } = options;
  const group = options.group ?? TrainerGroup.single(options.trainer);
  if (histories.length === 0) throw new ConfigError('SFT needs at least one demonstration history.');
  await group.setLr(config.learningRate);
  const updates: SftUpdate[] = [];
  const record = (update: SftUpdate): void => {
    updates.push(update);
    options.onUpdate?.(update);
  };
  if (config.excerptUpdates > 0) {
    const turnStartId = options.turnStartId;
    if (turnStartId === undefined) throw new ConfigError('SFT on excerpts needs the tokenizer\'s <|im_start|> id.');
    const excerpts = histories.map((history) => withoutSystemTurn(history, turnStartId));
    await group.setLr(config.excerptLearningRate);
    await runSftPhase({ ...options, group, histories: excerpts, kind: 'excerpts', count: config.excerptUpdates, first: 1, rng: createRng(options.seed).fork('excerpts'), record });
    await group.setLr(config.learningRate);
  }
  await runSftPhase({ ...options, group, kind: 'whole', count: config.updates, first: config.excerptUpdates + 1, rng: createRng(options.seed), record });
  return updates;
}

interface SftPhase {
  readonly group: TrainerGroup;
  readonly histories: readonly SftHistory[];
  readonly config: SftConfig;
  readonly kind: SftHistoryKind;
  readonly count: number;
  /** The number of the phase's first update. */
  readonly first: number;
  readonly rng: Rng;
  readonly record: (update: SftUpdate) => void;
}

async function runSftPhase(phase: SftPhase): Promise<void> {
  const { group, histories, config, rng } = phase;
  let order: number[] = [];
  let next = 0;
  let epoch = 0;
  const draw = (): SftHistory => {
    if (next >= order.length) {
      order = rng.fork(`epoch/${epoch}`).shuffle(histories.map((_, index) => index));
      epoch += 1;
      next = 0;
    }
    const history = histories[order[next]];
    next += 1;
    return history;
  };
  for (let update = phase.first; update < phase.first + phase.count; update += 1) {
    const started = performance.now();
    // Fill packedSequences micro-batches of at most maxSequenceTokens tokens each.
    const batches: SftHistory[][] = [];
    for (let b = 0; b < config.packedSequences; b += 1) {
      const batch: SftHistory[] = [];
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
    const micros: TrainSequence[][] = [];
    let at = 0;
    for (const batch of batches) {
      micros.push(sequences.slice(at, at + batch.length));
      at += batch.length;
    }
    // Micro-batch i to rank i mod R (one rank: all of them, in order).
    const shares = Array.from({ length: group.ranks }, (_, rank) => micros.filter((_, i) => i % group.ranks === rank));
    const parts = await group.accumulateShares('sft', shares, { sum: true });
    const loss = parts.reduce((sum, diagnostics) => sum + diagnostics.loss, 0);
    // Every rank's parameters are compared with rank 0's after each phase's first and last update.
    const step = await group.step({ verifyFingerprints: update === phase.first || update === phase.first + phase.count - 1 });
    phase.record({
      update,
      histories: phase.kind,
      loss,
      sampledTokens,
      tokens: all.reduce((sum, history) => sum + history.length, 0),
      gradNorm: step.gradNorm,
      lr: step.lr,
      seconds: (performance.now() - started) / 1000,
    });
  }
}
