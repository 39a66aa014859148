// SFT pieces: the cross-entropy coefficients weight only sampled tokens and average over all sampled
// tokens of the update; packing respects the token limit and refuses an oversized sequence; runSft
// on a tiny real model lowers the loss on scripted demonstrations.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { modelShape } from '../../src/model/shapes.js';
import { writeRandomCheckpoint } from '../../src/native/random-checkpoint.js';
import { Trainer } from '../../src/native/trainer.js';
import { scriptedDemonstrations } from '../../src/rl/demonstrations.js';
import { packByTokens, runSft, sftTrainSequences } from '../../src/rl/sft.js';
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
      config: { demonstrations: 4, demonstrationTeamSizes: [2], updates: 6, packedSequences: 1, maxSequenceTokens: 2048, learningRate: 2e-3, weightDecay: 0 },
      seed: 'sft-test',
    });
    expect(updates).toHaveLength(6);
    expect(updates[5].loss).toBeLessThan(0.8 * updates[0].loss);
    expect(trainer.stepCount()).toBe(6);
  });
});
