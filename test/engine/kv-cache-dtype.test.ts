// The engine's bf16 KV cache (kvCacheDtype 'bf16') on a random small model: scores within bf16
// tolerance of the f32 cache's (and not identical, so the option took effect), generation that no
// arrival order, batch limit or preemption changes, twice the blocks in the same bytes, the dtype
// in stats(), and a clear refusal of an unknown dtype.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferenceEngine, type EngineOptions } from '../../src/native/engine.js';
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

describe('bf16 KV cache', () => {
  it('scores within bf16 tolerance of the f32 cache', async () => {
    const f32 = start({ kvCacheDtype: 'f32' });
    const bf16 = start({ kvCacheDtype: 'bf16' });
    let worst = 0;
    for (const [length, salt] of [[25, 1], [70, 2], [140, 3]]) {
      const tokens = prompt(length, salt, V);
      const [a, b] = await Promise.all([f32.score(tokens), bf16.score(tokens)]);
      expect(b.length).toBe(length - 1);
      for (let i = 0; i < a.length; i += 1) worst = Math.max(worst, Math.abs(a[i] - b[i]));
      // A scratch cache of the engine's dtype: the same tokens score the same again.
      expect(await bf16.score(tokens)).toEqual(b);
    }
    // Keys and values keep 8 significant bits: log-probs (about −8 on this 4,096-token random
    // model) move by a few thousandths, never by nothing.
    expect(worst).toBeGreaterThan(0);
    expect(worst).toBeLessThan(0.01);
  });

  it('generates the same tokens for any arrival order, batch limits and preemption', async () => {
    const order = agents.map((_, i) => i);
    const forward = await runAgents(start({ kvCacheDtype: 'bf16' }), agents, order);
    const reversed = await runAgents(start({ kvCacheDtype: 'bf16', maxSequences: 2, maxBatchTokens: 9 }), agents, [...order].reverse());
    const tight = start({ kvCacheDtype: 'bf16', numBlocks: 10, maxContext: 144 });
    const squeezed = await runAgents(tight, agents, [4, 1, 5, 0, 3, 2]);
    expect(reversed).toEqual(forward);
    expect(squeezed).toEqual(forward);
    expect(tight.stats().preemptions).toBeGreaterThan(0);
  });

  it('holds twice the blocks of an f32 cache in the same bytes, and says so in stats()', () => {
    const kvCacheBytes = 8 * 2 ** 20;
    // numBlocks 0: as many blocks as kvCacheBytes holds.
    const f32 = start({ kvCacheBytes, numBlocks: 0 }).stats();
    const bf16 = start({ kvCacheBytes, numBlocks: 0, kvCacheDtype: 'bf16' }).stats();
    // small: 4 layers × 4 KV heads × 16 positions × 32 dims × (K, V) × 4 bytes = 64 KiB per f32 block.
    expect(f32.kvBlocksTotal).toBe(kvCacheBytes / 65536);
    expect(bf16.kvBlocksTotal).toBe(2 * f32.kvBlocksTotal);
    expect(f32.kvCacheDtype).toBe('f32');
    expect(bf16.kvCacheDtype).toBe('bf16');
  });

  it('refuses an unknown dtype, naming the option and the allowed values', () => {
    expect(() => InferenceEngine.load(small, { kvCacheDtype: 'fp8' as never })).toThrow(/kvCacheDtype must be 'f32' or 'bf16', got 'fp8'/);
    expect(() => InferenceEngine.load(small, { kvCacheDtype: 16 as never })).toThrow(/kvCacheDtype must be 'f32' or 'bf16'/);
  });
});
