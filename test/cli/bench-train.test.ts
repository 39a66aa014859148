// `swarm bench train --json`: the figures of a training step and how they relate, at one matmul
// precision or f32 and bf16 side by side (the speed itself is measured and recorded in
// docs/benchmarks.md, never asserted in a test).
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { packageRoot } from '../../src/native/addon.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');

describe('swarm bench train', () => {
  it('reports tokens/s, the FLOPs-per-token formula, the fraction of the FMA peak and the peak memory', () => {
    const report = JSON.parse(
      execFileSync(process.execPath, [swarm, 'bench', 'train', '--shape', 'tiny', '--seq', '48', '--repetitions', '2', '--json']).toString(),
    );
    const f = report.train;
    expect(report.optimizerStateDtype).toBe('f32');
    expect([report.matmulPrecision, report.runs.length, report.bf16OverF32]).toEqual(['f32', 1, null]);
    expect(f.tokens).toBe(48);
    expect(f.tokensPerSecond).toBeCloseTo(48 / f.medianSeconds, 6);
    expect(f.medianSeconds).toBeGreaterThanOrEqual(f.bestSeconds);
    expect(f.medianSeconds).toBeCloseTo(f.forwardBackwardSeconds + f.optimizerSeconds, 1);
    expect(f.gflops).toBeCloseTo((f.tokensPerSecond * f.flopsPerToken) / 1e9, 6);
    expect(f.fractionOfFmaPeak).toBeCloseTo(f.gflops / report.limits.fmaGflops, 9);
    expect(f.peakRssBytes).toBeGreaterThan(0);
    expect(Number.isFinite(f.loss)).toBe(true);
    // MFU against a GPU's datasheet peak is for device runs; the CPU's fractions are the ones above.
    expect([f.peakProduct, f.peakBf16Tflops, f.mfu]).toEqual([null, null, null]);
    // tiny: hidden 64, 2 layers, 4 heads of 16, 2 KV heads, MLP 128, vocab 512 (src/model/shapes.ts).
    const layer = 64 * (64 + 2 * 32) + 64 * 64 + 3 * 64 * 128;
    expect(f.flopsPerToken).toBe(6 * (2 * layer + 512 * 64) + (12 * 2 * 48 * 64) / 2);
  });

  it('packs --sequences sequences of --seq tokens per step, counting attention per sequence, and says where it ran', () => {
    const report = JSON.parse(
      execFileSync(process.execPath, [swarm, 'bench', 'train', '--shape', 'tiny', '--seq', '24', '--sequences', '3', '--device', 'cpu', '--repetitions', '1', '--no-warm-up', '--json']).toString(),
    );
    const f = report.train;
    expect([f.tokens, f.sequences]).toEqual([72, 3]);
    expect(f.device).toMatch(/^cpu \(/);
    const layer = 64 * (64 + 2 * 32) + 64 * 64 + 3 * 64 * 128;
    expect(f.flopsPerToken).toBe(6 * (2 * layer + 512 * 64) + (12 * 2 * 24 * 64) / 2);
    expect(f.tokensPerSecond).toBeCloseTo(72 / f.medianSeconds, 6);
  });

  it('accumulates --micro-batches micro-batches per step before one AdamW step, each of its own tokens, and refuses none', () => {
    const run = (...flags: string[]) =>
      JSON.parse(execFileSync(process.execPath, [swarm, 'bench', 'train', '--shape', 'tiny', '--seq', '24', '--sequences', '2', '--device', 'cpu', '--repetitions', '1', '--no-warm-up', '--json', ...flags], { stdio: 'pipe' }).toString()).train;
    const one = run(), three = run('--micro-batches', '3');
    expect([one.tokens, one.sequences, one.microBatches]).toEqual([48, 2, 1]);
    expect([three.tokens, three.sequences, three.microBatches]).toEqual([144, 2, 3]);
    expect(three.tokensPerSecond).toBeCloseTo(144 / three.medianSeconds, 6);
    expect(three.flopsPerToken).toBe(one.flopsPerToken);  // per token: the sequence length sets attention's share
    // The step's loss is the mean over its tokens: the first micro-batch is the one-micro-batch run's
    // batch, the others are new tokens, so the mean moves but stays a mean cross-entropy of the same model.
    expect(three.loss).not.toBe(one.loss);
    expect(Math.abs(three.loss - one.loss)).toBeLessThan(0.1 * one.loss);
    expect(() => run('--micro-batches', '0')).toThrow(/--micro-batches must be at least 1, got 0/);
  });

  it('times f32 and bf16 matmuls side by side with --precision f32,bf16, on the same batch, and refuses other precisions', () => {
    const run = (precision: string) =>
      execFileSync(process.execPath, [swarm, 'bench', 'train', '--shape', 'tiny', '--seq', '32', '--repetitions', '1', '--no-warm-up', '--precision', precision, '--json'], { stdio: 'pipe' }).toString();
    const report = JSON.parse(run('f32,bf16'));
    expect(report.runs.map((r: { matmulPrecision: string }) => r.matmulPrecision)).toEqual(['f32', 'bf16']);
    expect(report.matmulPrecision).toBe('f32');
    expect(report.train).toEqual(report.runs[0].train);
    const [f32, bf16] = report.runs.map((r: { train: { loss: number; tokensPerSecond: number } }) => r.train);
    // The same batch at two precisions: BF16 products move the loss, by BF16 rounding only.
    expect(bf16.loss).not.toBe(f32.loss);
    expect(Math.abs(bf16.loss - f32.loss)).toBeLessThan(1e-2 * Math.abs(f32.loss));
    expect(report.bf16OverF32).toBeCloseTo(bf16.tokensPerSecond / f32.tokensPerSecond, 9);
    if (report.limits.bf16DotGflops > 0) expect(bf16.fractionOfBf16DotPeak).toBeCloseTo(bf16.gflops / report.limits.bf16DotGflops, 9);
    else expect(bf16.fractionOfBf16DotPeak).toBeNull();
    if (report.limits.amxGflops > 0) expect(bf16.fractionOfAmxPeak).toBeCloseTo(bf16.gflops / report.limits.amxGflops, 9);
    else expect(bf16.fractionOfAmxPeak).toBeNull();
    const single = JSON.parse(run('bf16'));
    expect([single.matmulPrecision, single.runs.length, single.bf16OverF32]).toEqual(['bf16', 1, null]);
    expect(() => run('fp8')).toThrow(/--precision must be f32 or bf16, got "fp8"/);
  });

  it('recomputes each layer when its activations outgrow --activation-mib, with the loss of kept activations', () => {
    // tiny at 512 tokens: 2 layers × 512 tokens × 868 floats of activations = 3.4 MiB.
    const run = (...flags: string[]) =>
      JSON.parse(execFileSync(process.execPath, [swarm, 'bench', 'train', '--shape', 'tiny', '--seq', '512', '--repetitions', '1', '--no-warm-up', '--json', ...flags], { stdio: 'pipe' }).toString()).train;
    const kept = run(), recomputed = run('--activation-mib', '1'), fits = run('--activation-mib', '4');
    expect([kept.activationsKept, recomputed.activationsKept, fits.activationsKept]).toEqual([true, false, true]);
    expect(recomputed.loss).toBe(kept.loss);
    expect(() => run('--activation-mib', '-1')).toThrow(/--activation-mib must be at least 0, got -1/);
  });

  it('keeps the AdamW moments in bf16 with --optimizer-state bf16 and refuses other dtypes', () => {
    const run = (dtype: string) =>
      execFileSync(process.execPath, [swarm, 'bench', 'train', '--shape', 'tiny', '--seq', '16', '--repetitions', '1', '--no-warm-up', '--optimizer-state', dtype, '--json'], { stdio: 'pipe' }).toString();
    const report = JSON.parse(run('bf16'));
    expect(report.optimizerStateDtype).toBe('bf16');
    expect(Number.isFinite(report.train.loss)).toBe(true);
    expect(() => run('fp16')).toThrow(/--optimizer-state must be f32 or bf16, got "fp16"/);
  });
});
