// The engine's bf16 and fp8 KV caches (kvCacheDtype 'bf16', 'fp8') on a random small model: scores
// within each dtype's tolerance of the f32 cache's (and not identical, so the option took effect),
// generation that no arrival order, batch limit or preemption changes, more blocks in the same
// bytes (block sizes as kvCacheBytesPerPosition computes them), the dtype in stats(), and a clear
// refusal of an unknown dtype.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferenceEngine, kvCacheBytesPerPosition, type EngineOptions, type KvCacheDtype } from '../../src/native/engine.js';
import { makeCheckpoint, prompt, runAgents } from './helpers.js';

let small: string;
const V = 4096;
const engines: InferenceEngine[] = [];

function start(options: EngineOptions): InferenceEngine {
  const engine = InferenceEngine.load(small, { numBlocks: 512, ...options });
  engines.push(engine);
  return engine;
}

beforeAll(() => {
  small = makeCheckpoint('small', 3);
});

afterAll(() => {
  for (const engine of engines) engine.close();
  fs.rmSync(small, { recursive: true, force: true });
});

const agents = Array.from({ length: 6 }, (_, i) => ({ prompt: prompt(7 + i * 11, 20 + i, V), seed: BigInt(500 + i) }));

// Largest |log-prob difference| from the f32 cache a dtype may show on this model, with what was
// measured when the bounds were set. Log-probs are about −8 on this 4,096-token random model. bf16
// keeps 8 significant bits (worst measured 0.0024); fp8 e4m3 keeps 4 with a scale per row
// (worst measured 0.035, see docs/benchmarks.md).
const tolerance: Record<Exclude<KvCacheDtype, 'f32'>, number> = { bf16: 0.01, fp8: 0.1 };

describe.each(['bf16', 'fp8'] as const)('%s KV cache', (dtype) => {
  it(`scores within ${tolerance[dtype]} nats of the f32 cache`, async () => {
    const f32 = start({ kvCacheDtype: 'f32' });
    const reduced = start({ kvCacheDtype: dtype });
    let worst = 0;
    for (const [length, salt] of [[25, 1], [70, 2], [140, 3]]) {
      const tokens = prompt(length, salt, V);
      const [a, b] = await Promise.all([f32.score(tokens), reduced.score(tokens)]);
      expect(b.length).toBe(length - 1);
      for (let i = 0; i < a.length; i += 1) worst = Math.max(worst, Math.abs(a[i] - b[i]));
      // A scratch cache of the engine's dtype: the same tokens score the same again.
      expect(await reduced.score(tokens)).toEqual(b);
    }
    expect(worst).toBeGreaterThan(0);
    expect(worst).toBeLessThan(tolerance[dtype]);
  });

  it('generates the same tokens for any arrival order, batch limits and preemption', async () => {
    const order = agents.map((_, i) => i);
    const forward = await runAgents(start({ kvCacheDtype: dtype }), agents, order);
    const reversed = await runAgents(start({ kvCacheDtype: dtype, maxSequences: 2, maxBatchTokens: 9 }), agents, [...order].reverse());
    const tight = start({ kvCacheDtype: dtype, numBlocks: 10, maxContext: 144 });
    const squeezed = await runAgents(tight, agents, [4, 1, 5, 0, 3, 2]);
    expect(reversed).toEqual(forward);
    expect(squeezed).toEqual(forward);
    expect(tight.stats().preemptions).toBeGreaterThan(0);
  });
});

describe('KV cache dtypes', () => {
  it('hold 2× (bf16) and 3.6× (fp8) the blocks of an f32 cache in the same bytes, and say so in stats()', () => {
    const kvCacheBytes = 8 * 2 ** 20;
    // numBlocks 0: as many blocks as kvCacheBytes holds.
    const f32 = start({ kvCacheBytes, numBlocks: 0 }).stats();
    const bf16 = start({ kvCacheBytes, numBlocks: 0, kvCacheDtype: 'bf16' }).stats();
    const fp8 = start({ kvCacheBytes, numBlocks: 0, kvCacheDtype: 'fp8' }).stats();
    // small: 4 layers × 4 KV heads × 16 positions × 32 dims × (K, V) × 4 bytes = 64 KiB per f32 block;
    // fp8: 4 × 4 × 16 × (32 bytes + a 4-byte scale) × 2 = 18 KiB.
    expect(f32.kvBlocksTotal).toBe(kvCacheBytes / 65536);
    expect(bf16.kvBlocksTotal).toBe(2 * f32.kvBlocksTotal);
    expect(fp8.kvBytesPerBlock).toBe(18432);
    expect(fp8.kvBlocksTotal).toBe(Math.floor(kvCacheBytes / 18432));
    expect(fp8.kvBlocksTotal).toBeGreaterThan(bf16.kvBlocksTotal);
    const shape = { layers: 4, kvHeads: 4, headDim: 32 };
    for (const [dtype, stats] of [['f32', f32], ['bf16', bf16], ['fp8', fp8]] as const) {
      expect(stats.kvCacheDtype).toBe(dtype);
      expect(stats.kvBytesPerBlock).toBe(stats.blockSize * kvCacheBytesPerPosition(shape, dtype));
    }
  });

  it('refuses an unknown dtype, naming the option and the allowed values', () => {
    expect(() => InferenceEngine.load(small, { kvCacheDtype: 'fp16' as never })).toThrow(/kvCacheDtype must be 'f32', 'bf16' or 'fp8', got 'fp16'/);
    expect(() => InferenceEngine.load(small, { kvCacheDtype: 16 as never })).toThrow(/kvCacheDtype must be 'f32', 'bf16' or 'fp8'/);
  });
});
