// The engine's `device` and `weights` options: the device it resolved to and what its runner
// computes with in stats(); 'cuda' refused with the reason where CUDA cannot run (nothing is
// started); unknown values refused naming the option; and `weights: 'fp8'` scoring exactly what
// the FP8-quantized model's own logits give.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveDevice } from '../../src/native/device.js';
import { InferenceEngine } from '../../src/native/engine.js';
import { Qwen3Model } from '../../src/native/model.js';
import { makeCheckpoint, prompt } from './helpers.js';

let tiny: string;
const V = 512;

beforeAll(() => {
  tiny = makeCheckpoint('tiny', 11);
});

afterAll(() => {
  fs.rmSync(tiny, { recursive: true, force: true });
});

describe('engine device option', () => {
  it('runs on the CPU with device cpu and says so in stats()', () => {
    const engine = InferenceEngine.load(tiny, { device: 'cpu', numBlocks: 16 });
    try {
      const stats = engine.stats();
      expect(stats.device).toBe('cpu');
      expect(stats.runner.device).toBe('cpu');
      expect(stats.runner.gemm).toMatch(/^cpu /);
      expect(stats.runner.attention).toMatch(/^cpu /);
      expect(stats.runner.graphs).toBe('none (cpu)');
    } finally {
      engine.close();
    }
  });

  it('resolves auto to what this machine offers', () => {
    const engine = InferenceEngine.load(tiny, { numBlocks: 16 });
    try {
      expect(engine.stats().device).toBe(resolveDevice('auto'));
    } finally {
      engine.close();
    }
  });

  it('refuses device cuda where CUDA cannot run, with the reason', () => {
    if (resolveDevice('auto') === 'cuda') return;
    expect(() => InferenceEngine.load(tiny, { device: 'cuda', numBlocks: 16 })).toThrow(/--device cuda: .+; use --device cpu/);
  });

  it('refuses an unknown device or weight format naming the option', () => {
    expect(() => InferenceEngine.load(tiny, { device: 'gpu' as never })).toThrow(/device must be 'cpu', 'cuda' or 'auto', got 'gpu'/);
    expect(() => InferenceEngine.load(tiny, { weights: 'int4' as never })).toThrow(/weights must be 'stored', 'bf16' or 'fp8', got 'int4'/);
  });
});

describe('engine weights fp8', () => {
  it('scores what the FP8-quantized model gives, and not what the stored weights give', async () => {
    const tokens = prompt(40, 3, V);
    const model = Qwen3Model.load(tiny);
    const engine = InferenceEngine.load(tiny, { device: 'cpu', weights: 'fp8', numBlocks: 16 });
    try {
      const scored = await engine.score(tokens);
      const logits = model.logits(tokens, 0, { device: 'cpu', weights: 'fp8' });
      const stored = model.logits(tokens, 0, { device: 'cpu' });
      let movedFromStored = false;
      for (let t = 0; t + 1 < tokens.length; t += 1) {
        const logprob = (row: Float32Array) => {
          const max = Math.max(...row);
          const sum = row.reduce((acc, x) => acc + Math.exp(x - max), 0);
          return row[tokens[t + 1]] - max - Math.log(sum);
        };
        const fp8 = logprob(logits.subarray(t * V, (t + 1) * V));
        expect(Math.abs(scored[t] - fp8)).toBeLessThan(1e-5);
        movedFromStored ||= Math.abs(scored[t] - logprob(stored.subarray(t * V, (t + 1) * V))) > 1e-4;
      }
      expect(movedFromStored).toBe(true);
    } finally {
      engine.close();
    }
  });
});
