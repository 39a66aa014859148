// `swarm bench engine --json` and `swarm bench engine --soak --json` with tiny settings: the shape
// of the reports and their invariants (the speed itself is measured and recorded in
// docs/benchmarks.md, never asserted in a test).
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { packageRoot } from '../../src/native/addon.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');

function runJson(args: string[]): Record<string, any> {
  const result = spawnSync(process.execPath, [swarm, 'bench', 'engine', ...args, '--json'], { encoding: 'utf8', timeout: 120_000 });
  expect(result.stderr).not.toMatch(/Error/);
  expect(result.status).toBe(0);
  return JSON.parse(result.stdout);
}

describe('swarm bench engine', () => {
  it('reports concurrent and one-at-a-time decode, the speed-up and the per-step overhead', () => {
    const r = runJson(['--shape', 's3-mini', '--agents', '4', '--history', '64', '--piece', '16', '--baseline-agents', '1']);
    expect(r.agents).toBe(4);
    expect(r.history).toBe(64);
    expect(r.piece).toBe(16);
    // kvCacheBytes: 4 agents × 81 positions rounded to 16-position blocks × 2·4 layers·4 KV heads·32·4 bytes.
    expect(r.engine.kvCacheBytes).toBe(4 * 96 * 2 * 4 * 4 * 32 * 4);
    expect(r.engine.kvCacheDtype).toBe('f32');
    const c = r.concurrent;
    expect(c.prefill.processedTokens).toBe(4 * 64);
    expect(c.prefill.seconds).toBeGreaterThan(0);
    expect(c.decode.generatedTokens).toBe(4 * 16);
    expect(c.decodeTokensPerSecond).toBeGreaterThan(0);
    expect(c.decodeTokensPerSecond).toBeCloseTo((4 * 16) / c.decode.seconds, 6);
    expect(c.decode.steps).toBeGreaterThanOrEqual(16);
    expect(c.decode.busySeconds).toBeGreaterThan(0);
    expect(c.decode.busySeconds).toBeLessThanOrEqual(c.decode.seconds);
    expect(c.decode.overheadSeconds).toBeCloseTo(c.decode.seconds - c.decode.busySeconds, 9);
    expect(c.decode.busyMsPerStep).toBeGreaterThan(0);
    const s = r.sequential;
    expect(s.sequences).toBe(1);
    expect(s.extrapolated).toBe(true);
    expect(s.note).toMatch(/extrapolated/);
    expect(s.decode.generatedTokens).toBe(16);
    expect(s.decodeTokensPerSecond).toBeGreaterThan(0);
    expect(s.decodeSecondsForAllAgents).toBeCloseTo(4 * s.decode.seconds, 9);
    expect(r.speedup).toBeCloseTo(c.decodeTokensPerSecond / s.decodeTokensPerSecond, 9);
    expect(r.finalStats).toEqual({ openSequences: 0, kvBlocksUsed: 0, preemptions: 0 });
  }, 120_000);

  it('runs on a bf16 KV cache with --kv-dtype bf16 (half the bytes, the same blocks) and refuses other types', () => {
    const r = runJson(['--shape', 's3-mini', '--agents', '2', '--history', '64', '--piece', '8', '--baseline-agents', '1', '--kv-dtype', 'bf16']);
    expect(r.engine.kvCacheDtype).toBe('bf16');
    // 2 agents × 80 positions rounded to 16-position blocks × 2·4 layers·4 KV heads·32·2 bytes.
    expect(r.engine.kvCacheBytes).toBe(2 * 80 * 2 * 4 * 4 * 32 * 2);
    expect(r.engine.kvBlocksTotal).toBe(2 * 5);
    expect(r.concurrent.decode.generatedTokens).toBe(2 * 8);
    const bad = spawnSync(process.execPath, [swarm, 'bench', 'engine', '--kv-dtype', 'fp16'], { encoding: 'utf8', timeout: 60_000 });
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/--kv-dtype must be f32 or bf16 or fp8, got "fp16"/);
  }, 120_000);

  it('runs on an fp8 KV cache with --kv-dtype fp8 (a byte per element plus a scale per row), the soak too', () => {
    const r = runJson(['--shape', 's3-mini', '--agents', '2', '--history', '64', '--piece', '8', '--baseline-agents', '1', '--kv-dtype', 'fp8']);
    expect(r.engine.kvCacheDtype).toBe('fp8');
    // 2 agents × 80 positions rounded to 16-position blocks × 2·4 layers·4 KV heads·(32 bytes + a 4-byte scale).
    expect(r.engine.kvCacheBytes).toBe(2 * 80 * 2 * 4 * 4 * (32 + 4));
    expect(r.engine.kvBlocksTotal).toBe(2 * 5);
    expect(r.concurrent.decode.generatedTokens).toBe(2 * 8);
    expect(r.finalStats).toEqual({ openSequences: 0, kvBlocksUsed: 0, preemptions: 0 });
    const soak = runJson(['--soak', '--shape', 's3-mini', '--teams', '2', '--n', '2', '--minutes', '0.05', '--kv-dtype', 'fp8']);
    expect(soak.engine.kvCacheDtype).toBe('fp8');
    expect(soak.episodesFailed).toBe(0);
    expect(soak.episodesCompleted).toBeGreaterThan(0);
    expect(soak.released).toBe(true);
    expect(soak.deadlock.ok).toBe(true);
  }, 120_000);

  it('soaks teams through the harness and releases every sequence at the end', () => {
    const r = runJson(['--soak', '--shape', 's3-mini', '--teams', '8', '--n', '2', '--minutes', '0.2']);
    expect(r.teams).toBe(8);
    expect(r.n).toBe(2);
    expect(r.settings).toEqual({ workAllowance: 128, finalAllowance: 16, contextLimit: 1024, generationPieceTokens: 32, promptStyle: 'compact' });
    expect(r.episodesFailed).toBe(0);
    expect(r.episodesCompleted).toBeGreaterThan(0);
    expect(r.episodesCompleted).toBe(r.episodesStarted);
    expect(r.generatedTokens).toBeGreaterThan(0);
    expect(r.tokensPerSecond).toBeGreaterThan(0);
    for (const sample of [r.warmUp, r.atDeadline, r.end]) {
      expect(sample.rssBytes).toBeGreaterThan(0);
      expect(sample.kvBlocksUsed).toBeGreaterThanOrEqual(0);
    }
    expect(r.rssGrowthBytes).toBe(r.end.rssBytes - r.warmUp.rssBytes);
    expect(r.end.openSequences).toBe(0);
    expect(r.end.kvBlocksUsed).toBe(0);
    expect(r.released).toBe(true);
    expect(r.deadlock.ok).toBe(true);
  }, 120_000);
});
