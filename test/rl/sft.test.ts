// SFT pieces: the cross-entropy coefficients weight only sampled tokens and average over all sampled
// tokens of the update; packing respects the token limit and refuses an oversized sequence; an
// excerpt is the history from its first user turn on; runSft on a tiny real model lowers the loss on
// scripted demonstrations, excerpts first when asked.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { modelShape } from '../../src/model/shapes.js';
import { writeRandomCheckpoint } from '../../src/native/random-checkpoint.js';
import { Trainer } from '../../src/native/trainer.js';
import { scriptedDemonstrations } from '../../src/rl/demonstrations.js';
import { packByTokens, runSft, sftTrainSequences, withoutSystemTurn } from '../../src/rl/sft.js';
import { IM_START } from '../../src/model/chat/chat-markers.js';
import { Tokenizer } from '../../src/model/tokenizer/index.js';
import { history } from './helpers.js';

describe('sftTrainSequences', () => {
  it('puts 1/(sampled tokens of the batch) on each sampled target and 0 on context', () => {
    const a = history('a', [{ context: [1, 2] }, { sampled: [3, 4], logprobs: [-1, -1] }, { context: [5] }, { sampled: [6], logprobs: [-1] }]);
    const b = history('b', [{ context: [1] }, { sampled: [7], logprobs: [-1] }]);
    const [sa, sb] = sftTrainSequences([a, b]);
    expect(sa.coef).toEqual([0, 0.25, 0.25, 0, 0.25]);
    expect(sb.coef).toEqual([0.25]);
  });
});

describe('packByTokens', () => {
  it('fills micro-batches up to the limit in order and refuses a sequence over it', () => {
    const seq = (n: number) => ({ tokens: new Array<number>(n).fill(0) });
    expect(packByTokens([seq(3), seq(4), seq(2), seq(5)], 7).map((b) => b.map((s) => s.tokens.length))).toEqual([[3, 4], [2, 5]]);
    expect(() => packByTokens([seq(8)], 7)).toThrow(/8 tokens exceeds the micro-batch limit of 7/);
  });
});

describe('withoutSystemTurn', () => {
  it('cuts everything before the second turn start and keeps every sampled token and its role', () => {
    const START = 9;
    const h = history('a', [{ context: [START, 1, 2, 3, START, 4] }, { sampled: [5, 6], logprobs: [-1, -1] }, { context: [START, 7] }, { sampled: [8], logprobs: [-1] }]);
    const excerpt = withoutSystemTurn(h, START);
    expect(Array.from(excerpt.tokens())).toEqual([START, 4, 5, 6, START, 7, 8]);
    expect(Array.from(excerpt.roles())).toEqual(Array.from(h.roles()).slice(4));
    expect(excerpt.length).toBe(7);
    expect(excerpt.sampledCount).toBe(3);
    expect(sftTrainSequences([excerpt])[0].coef).toEqual([0, 1 / 3, 1 / 3, 0, 0, 1 / 3]);
  });

  it('keeps a history with a single turn whole', () => {
    const h = history('a', [{ context: [9, 1] }, { sampled: [2], logprobs: [-1] }]);
    expect(Array.from(withoutSystemTurn(h, 9).tokens())).toEqual([9, 1, 2]);
  });
});

describe('runSft', () => {
  it('lowers the loss of a fresh s3-mini model on scripted aggregation demonstrations', async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 's3-sft-'));
    writeRandomCheckpoint({ shape: modelShape('s3-mini'), seed: 3n, dtype: 'f32', directory });
    const demonstrations = await scriptedDemonstrations({
      task: 'aggregation',
      tokenizerPath: path.join(directory, 'tokenizer.json'),
      teamSizes: [2],
      episodesPerSize: 4,
      communication: true,
      seed: 'sft-test',
      settings: { workAllowance: 256, finalAllowance: 32, contextLimit: 2048, generationPieceTokens: 64, promptStyle: 'compact' },
    });
    expect(demonstrations.successes).toBe(4);
    expect(demonstrations.sequences).toHaveLength(8);
    const trainer = Trainer.open(directory, {});
    const updates = await runSft({
      trainer,
      histories: demonstrations.sequences,
      config: { demonstrations: 4, demonstrationTeamSizes: [2], excerptUpdates: 0, excerptLearningRate: 2e-3, updates: 6, warmupUpdates: 0, packedSequences: 1, maxSequenceTokens: 2048, learningRate: 2e-3, weightDecay: 0 },
      seed: 'sft-test',
    });
    expect(updates).toHaveLength(6);
    expect(updates[5].loss).toBeLessThan(0.8 * updates[0].loss);
    expect(trainer.stepCount()).toBe(6);
  });

  it('runs the excerpt updates first, numbered on into the whole-history updates, and refuses excerpts without the turn id', async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 's3-sft-'));
    writeRandomCheckpoint({ shape: modelShape('s3-mini'), seed: 4n, dtype: 'f32', directory });
    const tokenizerPath = path.join(directory, 'tokenizer.json');
    const demonstrations = await scriptedDemonstrations({
      task: 'aggregation-digits',
      tokenizerPath,
      teamSizes: [2],
      episodesPerSize: 2,
      communication: true,
      seed: 'sft-excerpts',
      settings: { workAllowance: 256, finalAllowance: 32, contextLimit: 2048, generationPieceTokens: 64, promptStyle: 'compact' },
    });
    const turnStartId = Tokenizer.fromFile(tokenizerPath).tokenToId(IM_START) as number;
    const config = { demonstrations: 2, demonstrationTeamSizes: [2], excerptUpdates: 2, excerptLearningRate: 2e-3, updates: 1, warmupUpdates: 0, packedSequences: 1, maxSequenceTokens: 2048, learningRate: 1e-3, weightDecay: 0 };
    const trainer = Trainer.open(directory, {});
    await expect(runSft({ trainer, histories: demonstrations.sequences, config, seed: 's' })).rejects.toThrow(/<\|im_start\|> id/);
    const updates = await runSft({ trainer, histories: demonstrations.sequences, config, seed: 's', turnStartId });
    expect(updates.map((u) => [u.update, u.histories])).toEqual([
      [1, 'excerpts'],
      [2, 'excerpts'],
      [3, 'whole'],
    ]);
    // Excerpts drop the system turn: the same agent-written tokens in fewer tokens.
    const whole = demonstrations.sequences.reduce((sum, h) => sum + h.length, 0);
    const cut = demonstrations.sequences.reduce((sum, h) => sum + withoutSystemTurn(h, turnStartId).length, 0);
    expect(cut).toBeLessThan(0.7 * whole);
    expect(updates[0].tokens / updates[0].sampledTokens).toBeLessThan(updates[2].tokens / updates[2].sampledTokens);
  });
});
