// `swarm bench forward|decode|harness|allreduce|weights --json`: the figures and their shape (decode for each KV cache type) (the speed itself is
// measured and recorded in docs/benchmarks.md, never asserted in a test).
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { packageRoot } from '../../src/native/addon.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');
const bench = (args: string[]) => JSON.parse(execFileSync(process.execPath, [swarm, 'bench', ...args, '--json']).toString());

describe('swarm bench', () => {
  it('forward: prefill figures with the FMA peak (and at avx512bf16 the BF16 dot-product peak, at amx the tile peak too) measured in the same run', () => {
    const report = bench(['forward', '--shape', 'tiny', '--batches', '1x32,2x16', '--repetitions', '1']);
    const doctor = JSON.parse(execFileSync(process.execPath, [swarm, 'doctor', '--json']).toString());
    expect(report.limits.simd).toBe(doctor.cpu.simdLevel);
    expect(report.limits.fmaGflops).toBeGreaterThan(0);
    if (report.limits.simd === 'avx512bf16' || report.limits.simd === 'amx') expect(report.limits.bf16DotGflops).toBeGreaterThan(0);
    else expect(report.limits.bf16DotGflops).toBe(0);
    if (report.limits.simd === 'amx') expect(report.limits.amxGflops).toBeGreaterThan(report.limits.bf16DotGflops);
    else expect(report.limits.amxGflops).toBe(0);
    if (report.limits.simd === 'amx') expect(report.limits.amxLoadedGflops).toBeGreaterThan(0);
    else expect(report.limits.amxLoadedGflops).toBe(0);
    expect(report.limits.readGBytesPerSecond).toBeGreaterThan(0);
    expect(report.prefill.map((f: { sequences: number; tokens: number }) => [f.sequences, f.tokens])).toEqual([[1, 32], [2, 16]]);
    for (const f of report.prefill) {
      expect(f.tokensPerStep).toBe(32);
      expect(f.tokensPerSecond).toBeCloseTo(32 / f.medianSeconds, 6);
      expect(f.fractionOfFmaPeak).toBeCloseTo(f.gflops / report.limits.fmaGflops, 9);
      expect(f.fractionOfLevelPeak).toBeCloseTo(f.gflops / (report.limits.amxGflops || report.limits.bf16DotGflops || report.limits.fmaGflops), 9);
    }
  });

  it('forward --kv-dtype: the prefill fills a cache of that element type (the bytes it writes follow it); refused on the runner path', () => {
    // tiny: 2 layers, 2 KV heads, head_dim 16; 2 sequences × 16 new positions, keys and values.
    const positions = 2 * 16;
    const perPosition = { f32: 2 * 2 * 2 * 16 * 4, bf16: 2 * 2 * 2 * 16 * 2, fp8: 2 * 2 * 2 * (16 + 4) };
    for (const dtype of ['f32', 'bf16', 'fp8'] as const) {
      const report = bench(['forward', '--shape', 'tiny', '--batches', '2x16', '--repetitions', '1', '--kv-dtype', dtype]);
      expect(report.kvCacheDtype).toBe(dtype);
      expect(report.prefill[0].kvGBytes).toBeCloseTo((positions * perPosition[dtype]) / 1e9, 12);
      expect(report.prefill[0].tokensPerSecond).toBeGreaterThan(0);
    }
    expect(() =>
      execFileSync(process.execPath, [swarm, 'bench', 'forward', '--shape', 'tiny', '--device', 'cpu', '--weights', 'fp8', '--kv-dtype', 'bf16'], { stdio: 'pipe' }),
    ).toThrow(/--kv-dtype bf16: bench forward sets the KV cache type on the CPU forward pass only/);
  });

  it('decode: one step per concurrency, speed-up relative to one sequence', () => {
    const report = bench(['decode', '--shape', 'tiny', '--sequences', '1,4', '--context', '48', '--repetitions', '2']);
    expect(report.decode).toHaveLength(2);
    expect(report.decode[0].speedupOverOneSequence).toBeCloseTo(1, 9);
    expect(report.decode[1].tokensPerStep).toBe(4);
    expect(report.decode[1].speedupOverOneSequence).toBeCloseTo(report.decode[1].tokensPerSecond / report.decode[0].tokensPerSecond, 9);
  });

  it('decode --kv-dtype: the cache bytes a step reads follow the element type (fp8 rows carry a 4-byte scale)', () => {
    // tiny: 2 layers, 2 KV heads, head_dim 16; 4 sequences × 48 cached positions, keys and values.
    const positions = 4 * 48;
    const perPosition = { f32: 2 * 2 * 2 * 16 * 4, bf16: 2 * 2 * 2 * 16 * 2, fp8: 2 * 2 * 2 * (16 + 4) };
    for (const dtype of ['f32', 'bf16', 'fp8'] as const) {
      const report = bench(['decode', '--shape', 'tiny', '--sequences', '4', '--context', '48', '--repetitions', '1', '--kv-dtype', dtype]);
      expect(report.kvCacheDtype).toBe(dtype);
      expect(report.decode[0].kvGBytes).toBeCloseTo((positions * perPosition[dtype]) / 1e9, 12);
      expect(report.decode[0].tokensPerSecond).toBeGreaterThan(0);
    }
    expect(() => execFileSync(process.execPath, [swarm, 'bench', 'decode', '--shape', 'tiny', '--kv-dtype', 'int4'], { stdio: 'pipe' })).toThrow(
      /--kv-dtype.*f32.*bf16.*fp8/s,
    );
  });

  it('decode --weights fp8: steps through the model runner, with the bytes a step reads and its roofline', () => {
    // tiny: 2 layers of 64×(64+2·32) + 64·64 + 3·64·128 FP8 weights (+ block scales), a bf16 LM head, bf16 KV.
    const report = bench(['decode', '--shape', 'tiny', '--sequences', '2', '--context', '40', '--repetitions', '1', '--kv-dtype', 'bf16', '--device', 'cpu', '--weights', 'fp8']);
    expect(report.runner.device).toBe('cpu');
    expect(report.kvCacheDtype).toBe('bf16');
    const linear = 2 * (64 * (64 + 2 * 32) + 64 * 64 + 3 * 64 * 128);
    const kv = 2 * 41 * 2 * 2 * 2 * 16 * 2;
    expect(report.decode[0].bytesPerStep).toBeCloseTo(linear * (1 + 4 / (128 * 128)) + 2 * 512 * 64 + kv, 3);
    expect(report.decode[0].fractionOfRoofline).toBeCloseTo(report.decode[0].tokensPerSecond / report.decode[0].rooflineTokensPerSecond, 9);
    expect(report.copyBandwidthGBytesPerSecond).toBeGreaterThan(0);
  });

  it('forward --weights fp8: prefill through the model runner in steps, with its model FLOPs (no MFU off a known GPU)', () => {
    const report = bench(['forward', '--shape', 'tiny', '--batches', '3x16', '--step-tokens', '32', '--repetitions', '1', '--device', 'cpu', '--weights', 'fp8']);
    expect(report.runner.gemm).toMatch(/^cpu /);
    expect(report.prefill[0]).toMatchObject({ sequences: 3, tokens: 16, stepTokens: 32 });
    expect(report.prefill[0].tokensPerSecond).toBeCloseTo(48 / report.prefill[0].medianSeconds, 6);
    // tiny: 2 layers of 64·(64 + 2·32) + 64·64 + 3·64·128 multiply-adds per token, causal attention of
    // 3 × 16·17/2 (query, key) pairs at 2 · 64 multiply-adds each (q·k and p·v), a 64 × 512 LM head
    // for the 3 last tokens; 2 FLOPs per multiply-add.
    const perToken = 64 * (64 + 2 * 32) + 64 * 64 + 3 * 64 * 128;
    const pairs = (3 * 16 * 17) / 2;
    const flops = 2 * (2 * (perToken * 48 + pairs * 2 * 64) + 3 * 64 * 512);
    expect(report.prefill[0].flops).toBe(flops);
    expect(report.prefill[0].tflops).toBeCloseTo(flops / report.prefill[0].medianSeconds / 1e12, 12);
    expect(report.prefill[0]).toMatchObject({ peakProduct: null, peakBf16Tflops: null, mfu: null });
  });

  it('allreduce: the host ring per group size beside the memory bandwidth, the same bits on every rank', () => {
    const report = bench(['allreduce', '--ranks', '2,3', '--mib', '1', '--repetitions', '2']);
    expect(report.memoryReadGbytesPerSecond).toBeGreaterThan(0);
    expect(report.rings.map((r: { ranks: number; floats: number }) => [r.ranks, r.floats])).toEqual([[2, 262144], [3, 262144]]);
    for (const r of report.rings) {
      expect(r.sameOnEveryRank).toBe(true);
      expect(r.bestSeconds).toBeLessThanOrEqual(r.medianSeconds);
      expect(r.busGbytesPerSecond).toBeCloseTo((r.algorithmGbytesPerSecond * 2 * (r.ranks - 1)) / r.ranks, 9);
    }
  });

  it('weights: one version through a folder and over a TCP weight link, the same scores after either', () => {
    const report = bench(['weights', '--shape', 'tiny', '--repetitions', '2']);
    expect(report.sameScores).toBe(true);
    expect(report.folder.seconds).toHaveLength(2);
    expect(report.link.seconds).toHaveLength(2);
    // The same f32 parameters both ways (the folder adds config.json and the safetensors header).
    expect(report.folder.bytes).toBeGreaterThan(report.link.bytes);
    expect(report.folder.bytes).toBeLessThan(1.1 * report.link.bytes);
    expect(report.linkSpeedup).toBeCloseTo(report.folder.medianSeconds / report.link.medianSeconds, 9);
    expect(report.trainer).toMatch(/^cpu/);
  });

  it('harness: events per second of concurrent scripted teams', () => {
    const report = bench(['harness', '--teams', '3', '--n', '2', '--depth', '2']);
    expect(report.teams).toBe(3);
    expect(report.events).toBeGreaterThan(0);
    expect(report.eventsPerSecond).toBeCloseTo(report.events / (report.wallMs / 1000), 6);
  });
});
