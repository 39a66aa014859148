// The native bindings read their options through one reader (native/napi/options.h): every field of
// the wrong type, a fractional integer or a missing required field is refused with a TypeError that
// names the options and the field, for the engine, generate, the trainer and the benchmarks alike.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAddon } from '../../src/native/addon.js';
import { InferenceEngine } from '../../src/native/engine.js';
import { Trainer } from '../../src/native/trainer.js';
import { makeCheckpoint } from '../engine/helpers.js';

let tiny: string;

beforeAll(() => {
  tiny = makeCheckpoint('tiny', 5);
});

afterAll(() => {
  fs.rmSync(tiny, { recursive: true, force: true });
});

describe('native options', () => {
  it('refuses engine options of the wrong type, naming the field', () => {
    expect(() => InferenceEngine.load(tiny, { maxContext: 'long' as never })).toThrow(/Engine options: maxContext must be an integer, got a string/);
    expect(() => InferenceEngine.load(tiny, { maxSequences: 2.5 })).toThrow(/Engine options: maxSequences must be an integer, got 2\.5/);
    expect(() => InferenceEngine.load(tiny, { prefixCaching: 1 as never })).toThrow(/Engine options: prefixCaching must be a boolean, got a number/);
  });

  it('refuses a generate request without maxNew or with a temperature of the wrong type', async () => {
    const engine = InferenceEngine.load(tiny, { device: 'cpu', numBlocks: 8 });
    try {
      const sequence = engine.openSequence();
      engine.append(sequence, [1, 2, 3]);
      await expect(engine.generate(sequence, { stopTokenIds: [], temperature: 1, seed: 1n } as never)).rejects.toThrow(/generate: maxNew must be an integer, got nothing/);
      await expect(engine.generate(sequence, { maxNew: 4, stopTokenIds: [], temperature: 'hot' as never, seed: 1n })).rejects.toThrow(/generate: temperature must be a number, got a string/);
    } finally {
      engine.close();
    }
  });

  it('refuses trainer and benchmark options of the wrong type', () => {
    expect(() => Trainer.open(tiny, { lr: 'fast' as never })).toThrow(/Trainer options: lr must be a number, got a string/);
    expect(() => Trainer.open(tiny, { warmupSteps: 0.5 })).toThrow(/Trainer options: warmupSteps must be an integer, got 0\.5/);
    const { binding } = loadAddon();
    expect(() => binding.benchTrain(tiny, { tokens: 16, repetitions: 1 } as never)).toThrow(/benchTrain: warmUp must be a boolean, got nothing/);
    expect(() => binding.benchTrain(tiny, { tokens: 16, repetitions: 1, warmUp: false, microBatches: 0 } as never)).toThrow(/bench_train: micro_batches must be at least 1, got 0/);
  });
});
