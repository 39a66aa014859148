// The TypeScript Trainer wrapper over the native CPU trainer: SFT steps lower the loss, the policy
// gradient reports its diagnostics, weights come out as named tensors, a saved checkpoint
// resumes bit-identically (also with bf16 optimizer moments), and the optimizer state dtype is
// checked: unknown values and checkpoints of the other dtype are refused; a fresh optimizer can be asked for;
// the policy gradient's log-probs are taken at the sampling temperature; BF16 products (matmulPrecision) are
// taken, recorded and checked.
import { describe, expect, it, beforeAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../src/native/addon.js';
import { Trainer } from '../../src/native/trainer.js';
import { Qwen3Model } from '../../src/native/model.js';
import { InferenceEngine } from '../../src/native/engine.js';
import { resolveDevice } from '../../src/native/device.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 's3-trainer-'));
const model = path.join(work, 'tiny');
const seq = { tokens: [3, 9, 27, 81, 243, 217, 139, 5, 15], coef: [1, 1, 1, 1, 1, 1, 1, 1] };
const other = { tokens: [100, 200, 300, 400, 500], coef: [0.5, 0.5, 0.5, 0.5] };

/** A piece the engine samples after a fixed history, as a policy-gradient sequence weighting the sampled tokens with the sampler's log-probs. */
async function sampledSequence(engine: InferenceEngine, maxNew: number, temperature: number, seed: bigint): Promise<{ tokens: number[]; coef: number[]; oldLogprobs: number[] }> {
  const history = [3, 9, 27, 81, 243];
  const sequence = engine.openSequence();
  engine.append(sequence, history);
  const piece = await engine.generate(sequence, { maxNew, stopTokenIds: [], temperature, seed });
  const tokens = [...history, ...piece.tokens];
  const sampledFrom = history.length - 1;
  return {
    tokens,
    coef: tokens.slice(1).map((_, t) => (t >= sampledFrom ? 1 : 0)),
    oldLogprobs: tokens.slice(1).map((_, t) => (t >= sampledFrom ? piece.logprobs[t - sampledFrom] : 0)),
  };
}

describe('Trainer', () => {
  beforeAll(() => {
    execFileSync(process.execPath, [swarm, 'model', 'init', '--shape', 'tiny', '--seed', '7', '--dtype', 'f32', '--out', model]);
  });

  it('lowers the SFT loss over a few steps and exposes the weights as named tensors', async () => {
    const trainer = Trainer.open(model, { lr: 1e-2, threads: 2 });
    const first = await trainer.accumulate('sft', [seq, other]);
    expect(first.tokens).toBe(12);
    trainer.step();
    let last = first.loss;
    for (let i = 0; i < 20; i += 1) {
      last = (await trainer.accumulate('sft', [seq, other])).loss;
      trainer.step();
    }
    expect(last).toBeLessThan(first.loss / 2);
    expect(trainer.stepCount()).toBe(21);
    const tensors = trainer.tensors();
    expect(tensors[0].name).toBe('model.embed_tokens.weight');
    expect(tensors[0].shape).toEqual([512, 64]);
    expect(tensors[0].data).toBeInstanceOf(Float32Array);
  });

  it('says where it computes, and refuses CUDA with the reason where CUDA cannot run', async () => {
    const onCpu = Trainer.open(model, { device: 'cpu', threads: 2 });
    expect(onCpu.device).toMatch(/^cpu \(\w+, 2 threads\)$/);
    if (resolveDevice('auto') === 'cpu') {
      expect(() => Trainer.open(model, { device: 'cuda' })).toThrow(/cannot open a trainer on .*: --device cuda: .*use --device cpu/);
      expect(Trainer.open(model, { threads: 2 }).device).toMatch(/^cpu /); // 'auto' without a usable GPU
    }
    expect(() => Trainer.open(model, { device: 'tpu' as never })).toThrow(/Trainer options: device must be 'cpu', 'cuda' or 'auto', got 'tpu'/);
    expect(() => Trainer.open(model, { activationBytes: -1 })).toThrow(/activationBytes must be ≥ 0/);
  });

  it('reports ratio, IcePop masking and entropy for the policy gradient', async () => {
    const trainer = Trainer.open(model, { threads: 2 });
    const d = await trainer.accumulate('pg', [{ ...seq, oldLogprobs: seq.coef.map((_, t) => (t === 0 ? 100 : -100)) }]);
    expect(d.tokens).toBe(8);
    expect(d.fractionMasked).toBe(1); // every ratio is far outside [0.2, 5]
    expect(d.loss).toBe(0);
    expect(d.meanEntropy).toBeGreaterThan(0);
    await expect(trainer.accumulate('pg', [seq])).rejects.toThrow(/oldLogprobs/);
    await expect(trainer.accumulate('sft', [{ tokens: [1, 2], coef: [1, 1] }])).rejects.toThrow(/coefficients/);
  });

  it('takes the policy\'s log-probs at the sampling temperature, where the sampler recorded μ', async () => {
    // On-policy rollouts (the trainer holds the sampler's weights) have ratio 1 at the sampling temperature only.
    const engine = InferenceEngine.load(model, { maxContext: 128 });
    try {
      const { tokens, coef, oldLogprobs } = await sampledSequence(engine, 12, 0.6, 5n);
      const trainer = Trainer.open(model, { threads: 2 });
      const at = async (temperature: number) => {
        const d = await trainer.accumulate('pg', [{ tokens, coef, oldLogprobs }], { temperature });
        trainer.zeroGrad();
        return d;
      };
      const tempered = await at(0.6);
      expect(tempered.tokens).toBe(12);
      expect(Math.abs(tempered.meanRatio - 1)).toBeLessThan(1e-3);
      expect(Math.abs((await at(1)).meanRatio - 1)).toBeGreaterThan(1e-2);
      await expect(trainer.accumulate('pg', [{ tokens, coef, oldLogprobs }], { temperature: 0 })).rejects.toThrow(/temperature must be a finite number > 0/);
    } finally {
      engine.close();
    }
  });

  it('measures the sampler/trainer mismatch of each rollout precision (meanAbsLogRatio)', async () => {
    // The trainer holds the f32 weights; the engine samples from them as stored, rounded to BF16, or
    // quantized to FP8 with an FP8 KV cache (precision.rollout*): the narrower, the larger |log π_θ − log μ|.
    const mismatch = async (weights: 'stored' | 'bf16' | 'fp8', kvCacheDtype: 'f32' | 'bf16' | 'fp8'): Promise<number> => {
      const engine = InferenceEngine.load(model, { maxContext: 128, weights, kvCacheDtype });
      try {
        const d = await Trainer.open(model, { threads: 2 }).accumulate('pg', [await sampledSequence(engine, 24, 1, 11n)]);
        expect(d.tokens).toBe(24);
        return d.meanAbsLogRatio;
      } finally {
        engine.close();
      }
    };
    const f32 = await mismatch('stored', 'f32');
    const bf16 = await mismatch('bf16', 'bf16');
    const fp8 = await mismatch('fp8', 'fp8');
    expect(f32).toBeLessThan(1e-4); // the same weights and arithmetic up to summation order
    expect(bf16).toBeGreaterThan(10 * f32);
    expect(fp8).toBeGreaterThan(bf16);
  });

  it('moves the sampled tokens\' log-probs with the sign of their advantage', async () => {
    // The probe's meanLogprob is the mean log-prob of the weighted tokens under the current weights.
    const meanLogprob = async (trainer: Trainer): Promise<number> => {
      const probe = await trainer.accumulate('sft', [seq]);
      trainer.zeroGrad();
      return probe.meanLogprob;
    };
    for (const advantage of [1, -1]) {
      const trainer = Trainer.open(model, { lr: 1e-3, threads: 2 });
      const before = await meanLogprob(trainer);
      // The sampler's log-probs: the random model's are all close to their mean, so no ratio leaves IcePop's [0.2, 5].
      const oldLogprobs = seq.coef.map(() => before);
      for (let i = 0; i < 3; i += 1) {
        const d = await trainer.accumulate('pg', [{ ...seq, coef: seq.coef.map(() => advantage / seq.coef.length), oldLogprobs }]);
        expect(d.fractionMasked).toBe(0);
        trainer.step();
      }
      const after = await meanLogprob(trainer);
      if (advantage > 0) expect(after).toBeGreaterThan(before + 0.01);
      else expect(after).toBeLessThan(before - 0.01);
    }
  });

  it('applies score centering when draws are given', async () => {
    const trainer = Trainer.open(model, { threads: 2 });
    const probe = await trainer.accumulate('sft', [seq]);
    trainer.zeroGrad();
    const K = 3;
    const oldLogprobs = seq.coef.map(() => probe.meanLogprob);
    const draws = { tokens: seq.coef.flatMap((_, t) => [seq.tokens[t + 1], 7, -1]), logprobs: seq.coef.flatMap(() => [probe.meanLogprob, -6.2, 0]) };
    const plain = await trainer.accumulate('pg', [{ ...seq, oldLogprobs }]);
    const plainGrad = trainer.gradients()[0].data.slice();
    trainer.zeroGrad();
    const centered = await trainer.accumulate('pg', [{ ...seq, oldLogprobs, draws }], { numDraws: K });
    expect(centered.loss).toBe(plain.loss);
    expect(centered.centering).not.toBe(0);
    expect(centered.meanDrawWeight).toBeGreaterThan(0);
    const grad = trainer.gradients()[0].data;
    expect(grad.some((g, i) => g !== plainGrad[i])).toBe(true);
    await expect(trainer.accumulate('pg', [{ ...seq, oldLogprobs, draws: { tokens: [1], logprobs: [0] } }], { numDraws: K })).rejects.toThrow(/draws/);
  });

  it('saves a loadable checkpoint that resumes bit-identically', async () => {
    const ckpt = path.join(work, 'ckpt');
    const a = Trainer.open(model, { lr: 1e-3, threads: 2 });
    for (let i = 0; i < 3; i += 1) {
      await a.accumulate('sft', [seq]);
      a.step();
    }
    a.save(ckpt, { task: 'exploration', teams: 8 });
    expect(JSON.parse(fs.readFileSync(path.join(ckpt, 'run_config.json'), 'utf8'))).toEqual({ task: 'exploration', teams: 8 });
    const b = Trainer.open(ckpt, { lr: 1e-3, threads: 2 });
    expect(b.stepCount()).toBe(3);
    for (const t of [a, b]) {
      for (let i = 0; i < 2; i += 1) {
        await t.accumulate('sft', [other, seq]);
        t.step();
      }
    }
    const wa = a.tensors(), wb = b.tensors();
    wa.forEach((t, i) => expect(Buffer.from(t.data.buffer).equals(Buffer.from(wb[i].data.buffer))).toBe(true));
    expect(Qwen3Model.load(ckpt).config().hiddenSize).toBe(64);
  });

  it('keeps bf16 optimizer moments, resumes them bit-identically and refuses a checkpoint of the other dtype', async () => {
    const ckpt = path.join(work, 'ckpt-bf16');
    const a = Trainer.open(model, { lr: 1e-3, threads: 2, optimizerStateDtype: 'bf16' });
    for (let i = 0; i < 3; i += 1) {
      await a.accumulate('sft', [seq]);
      a.step();
    }
    a.save(ckpt);
    expect(JSON.parse(fs.readFileSync(path.join(ckpt, 'trainer_state.json'), 'utf8')).adamw.state_dtype).toBe('bf16');
    const b = Trainer.open(ckpt, { lr: 1e-3, threads: 1, optimizerStateDtype: 'bf16' });
    expect(b.stepCount()).toBe(3);
    for (const t of [a, b]) {
      await t.accumulate('sft', [other, seq]);
      t.step();
    }
    const wa = a.tensors(), wb = b.tensors();
    wa.forEach((t, i) => expect(Buffer.from(t.data.buffer).equals(Buffer.from(wb[i].data.buffer))).toBe(true));
    expect(() => Trainer.open(ckpt, { threads: 2 })).toThrow(/optimizer\.safetensors holds exp_avg\.\S+ as BF16, but this trainer keeps its optimizer state in F32/);
    const f32 = Trainer.open(model, { threads: 2 });
    expect(() => f32.load(ckpt)).toThrow(/load from .*ckpt-bf16 failed: .*optimizer state dtype "f32"/);
  });

  it('opens a saved checkpoint with a fresh optimizer when asked: the saved weights, step 0, no momentum', async () => {
    const ckpt = path.join(work, 'ckpt-fresh');
    const a = Trainer.open(model, { lr: 1e-3, threads: 2 });
    for (let i = 0; i < 3; i += 1) {
      await a.accumulate('sft', [seq]);
      a.step();
    }
    a.save(ckpt);
    const fresh = Trainer.open(ckpt, { lr: 1e-3, threads: 2, freshOptimizer: true });
    const restored = Trainer.open(ckpt, { lr: 1e-3, threads: 2 });
    expect([fresh.stepCount(), restored.stepCount()]).toEqual([0, 3]);
    const saved = a.tensors();
    fresh.tensors().forEach((t, i) => expect(Buffer.from(t.data.buffer).equals(Buffer.from(saved[i].data.buffer))).toBe(true));
    // A step on a zero gradient: the restored moments still move the weights, fresh ones do not.
    for (const t of [fresh, restored]) t.step();
    fresh.tensors().forEach((t, i) => expect(Buffer.from(t.data.buffer).equals(Buffer.from(saved[i].data.buffer))).toBe(true));
    expect(restored.tensors().some((t, i) => !Buffer.from(t.data.buffer).equals(Buffer.from(saved[i].data.buffer)))).toBe(true);
    expect(() => Trainer.open(ckpt, { freshOptimizer: 'yes' as unknown as boolean })).toThrow(/freshOptimizer must be a boolean/);
  });

  it('multiplies with BF16 operands when matmulPrecision is bf16: another loss, near f32\'s, recorded in the checkpoint', async () => {
    const f32 = Trainer.open(model, { lr: 1e-3, threads: 2 });
    const bf16 = Trainer.open(model, { lr: 1e-3, threads: 2, matmulPrecision: 'bf16' });
    const [lossF32, lossBf16] = [(await f32.accumulate('sft', [seq, other])).loss, (await bf16.accumulate('sft', [seq, other])).loss];
    expect(lossBf16).not.toBe(lossF32);
    expect(Math.abs(lossBf16 - lossF32)).toBeLessThan(1e-2 * Math.abs(lossF32));
    const ckpt = path.join(work, 'ckpt-bf16-products');
    bf16.step();
    bf16.save(ckpt);
    expect(JSON.parse(fs.readFileSync(path.join(ckpt, 'trainer_state.json'), 'utf8')).matmul_precision).toBe('bf16');
    f32.step();
    f32.save(path.join(work, 'ckpt-f32-products'));
    expect(JSON.parse(fs.readFileSync(path.join(work, 'ckpt-f32-products', 'trainer_state.json'), 'utf8')).matmul_precision).toBe('f32');
    expect(() => Trainer.open(model, { matmulPrecision: 'fp8' as 'bf16' })).toThrow(/matmulPrecision must be 'f32' or 'bf16', got fp8/);
  });

  it('refuses an unknown optimizer state dtype', () => {
    expect(() => Trainer.open(model, { optimizerStateDtype: 'fp16' as 'bf16' })).toThrow(/optimizerStateDtype must be 'f32' or 'bf16', got fp16/);
  });
});
