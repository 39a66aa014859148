// The inference engine against its reference (one sequence at a time through Model.logits and the
// same sampler): greedy and sampled pieces, extra draws, pieces continued across appends, stop
// tokens and the context limit; determinism whatever the arrival order and batch limits, and with
// prefix caching; KV
// exhaustion (preemption) changing nothing; cancellation; scoring; weight swaps; bad input.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InferenceEngine, type EngineOptions } from '../../src/native/engine.js';
import { Qwen3Model } from '../../src/native/model.js';
import { makeCheckpoint, prompt, referencePiece, runAgents } from './helpers.js';

let small: string;
let other: string;
let model: Qwen3Model;
const V = 4096;
const engines: InferenceEngine[] = [];

function start(options: EngineOptions = {}, directory = small): InferenceEngine {
  const engine = InferenceEngine.load(directory, { numBlocks: 512, ...options });
  engines.push(engine);
  return engine;
}

beforeAll(() => {
  small = makeCheckpoint('small', 1);
  other = makeCheckpoint('small', 2);
  model = Qwen3Model.load(small);
});

afterAll(() => {
  for (const engine of engines) engine.close();
  for (const dir of [small, other]) fs.rmSync(dir, { recursive: true, force: true });
});

const agents = Array.from({ length: 8 }, (_, i) => ({ prompt: prompt(5 + i * 9, i, V), seed: BigInt(1000 + i) }));

describe('generation equals the one-sequence reference', () => {
  it('greedy at temperature 0', async () => {
    const engine = start();
    const history = prompt(20, 1, V);
    const sequence = engine.openSequence();
    engine.append(sequence, history);
    const piece = await engine.generate(sequence, { maxNew: 16, stopTokenIds: [], temperature: 0, seed: 0 });
    const expected = referencePiece(model, history, { maxNew: 16, temperature: 0, seed: 0n });
    expect(piece.tokens).toEqual(expected.tokens);
    expect(piece.logprobs).toEqual(expected.logprobs);
    expect(piece.finish).toBe('length');
    expect(piece.policyVersion).toBe(0);
  });

  it('sampled at temperature 1 with K extra draws, continued across appended context', async () => {
    const engine = start();
    let history = prompt(33, 2, V);
    const sequence = engine.openSequence();
    engine.append(sequence, history);
    for (let p = 0; p < 3; p += 1) {
      const piece = await engine.generate(sequence, { maxNew: 10, stopTokenIds: [], temperature: 1, seed: 99n, draws: 3 });
      const expected = referencePiece(model, history, { maxNew: 10, temperature: 1, seed: 99n, draws: 3 });
      expect(piece.tokens).toEqual(expected.tokens);
      expect(piece.logprobs).toEqual(expected.logprobs.map((x) => Math.fround(x)));
      expect(Array.from(piece.draws?.tokens ?? [])).toEqual(expected.drawTokens);
      expect(Array.from(piece.draws?.logprobs ?? [])).toEqual(expected.drawLogprobs);
      const context = prompt(7, 10 + p, V);
      engine.append(sequence, context);
      history = [...history, ...piece.tokens, ...context];
    }
    // Each token was processed once: the prompt, the context appended between pieces and every
    // sampled token but the last (the last context append is processed by the next request).
    expect(engine.stats().processedTokens).toBe(33 + 2 * 7 + 3 * 10 - 1);
  });

  it('stops right after a stop token (returned) and at the context limit', async () => {
    const engine = start({ maxContext: 48 });
    const history = prompt(40, 3, V);
    const free = referencePiece(model, history, { maxNew: 6, temperature: 1, seed: 5n });
    const stop = free.tokens[2];
    const sequence = engine.openSequence();
    engine.append(sequence, history);
    const stopped = await engine.generate(sequence, { maxNew: 6, stopTokenIds: [stop], temperature: 1, seed: 5n });
    expect(stopped.tokens).toEqual(free.tokens.slice(0, free.tokens.indexOf(stop) + 1));
    expect(stopped.finish).toBe('stop');
    const rest = await engine.generate(sequence, { maxNew: 100, stopTokenIds: [], temperature: 1, seed: 5n });
    expect(rest.finish).toBe('context');
    expect(40 + stopped.tokens.length + rest.tokens.length).toBe(48);
    const none = await engine.generate(sequence, { maxNew: 5, stopTokenIds: [], temperature: 1, seed: 5n });
    expect(none).toMatchObject({ tokens: [], finish: 'context' });
    expect(() => engine.append(sequence, [1])).toThrow(RangeError);
  });
});

describe('batching never changes a token', () => {
  it('gives the same tokens for any arrival order and any batch limits', async () => {
    const forward = await runAgents(start(), agents, agents.map((_, i) => i));
    const reversed = await runAgents(start({ maxSequences: 3, maxBatchTokens: 7 }), agents, agents.map((_, i) => agents.length - 1 - i));
    const oneAtATime = await runAgents(start({ maxSequences: 1, maxBatchTokens: 16 }), agents, [3, 1, 7, 0, 2, 6, 4, 5]);
    expect(reversed).toEqual(forward);
    expect(oneAtATime).toEqual(forward);
    const first = agents[0];
    expect(forward[0].slice(0, 12)).toEqual(referencePiece(model, first.prompt, { maxNew: 12, temperature: 1, seed: first.seed }).tokens);
  });

  it('shares full KV blocks of a common prompt prefix (prefix caching) without changing a token', async () => {
    // Eight agents whose prompts start with the same 40 tokens (two full blocks of 16), after a ninth
    // sequence holding just those tokens has been prefilled (so the blocks are cached, whatever the timing).
    const shared = prompt(40, 9, V);
    const alike = agents.map((agent) => ({ ...agent, prompt: [...shared, ...agent.prompt] }));
    const run = async (engine: InferenceEngine): Promise<number[][]> => {
      const warm = engine.openSequence();
      engine.append(warm, shared);
      await engine.generate(warm, { maxNew: 1, stopTokenIds: [], temperature: 1, seed: 5 });
      const pieces = await runAgents(engine, alike, alike.map((_, i) => i));
      engine.release(warm);
      return pieces;
    };
    const uncached = start({ prefixCaching: false });
    const expected = await run(uncached);
    expect(uncached.stats().prefixCacheHitTokens).toBe(0);
    const cached = start();
    expect(await run(cached)).toEqual(expected);
    expect(cached.stats().prefixCacheHitTokens).toBe(8 * 32);
    expect(cached.stats().processedTokens).toBe(uncached.stats().processedTokens - 8 * 32);
  });

  it('preempts instead of failing when KV blocks run out, with the same tokens', async () => {
    const roomy = await runAgents(start(), agents, agents.map((_, i) => i), 3);
    // 12 blocks of 16 positions: room for about two of these agents at once.
    const tight = start({ numBlocks: 12, maxContext: 192 });
    const squeezed = await runAgents(tight, agents, agents.map((_, i) => i), 3);
    expect(squeezed).toEqual(roomy);
    expect(tight.stats().preemptions).toBeGreaterThan(0);
    // Released sequences are freed by the scheduler thread moments later.
    await vi.waitFor(() => expect(tight.stats().kvBlocksUsed).toBe(0), { timeout: 30_000 });
  });
});

describe('cancellation', () => {
  it('resolves a running request as cancelled with the tokens so far', async () => {
    const engine = start();
    const history = prompt(12, 4, V);
    const full = engine.openSequence();
    engine.append(full, history);
    const whole = await engine.generate(full, { maxNew: 300, stopTokenIds: [], temperature: 1, seed: 3n });
    const sequence = engine.openSequence();
    engine.append(sequence, history);
    const controller = new AbortController();
    const pending = engine.generate(sequence, { maxNew: 300, stopTokenIds: [], temperature: 1, seed: 3n, signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    const piece = await pending;
    expect(piece.finish).toBe('cancelled');
    expect(piece.tokens.length).toBeLessThan(300);
    expect(piece.tokens).toEqual(whole.tokens.slice(0, piece.tokens.length));
    // The sequence carries on from where it stopped.
    engine.append(sequence, [5]);
    const next = await engine.generate(sequence, { maxNew: 3, stopTokenIds: [], temperature: 1, seed: 3n });
    expect(next.tokens).toEqual(referencePiece(model, [...history, ...piece.tokens, 5], { maxNew: 3, temperature: 1, seed: 3n }).tokens);
  });

  it('cancels a request whose signal is already aborted, and everything pending on close', async () => {
    const engine = start();
    const sequence = engine.openSequence();
    engine.append(sequence, [1, 2, 3]);
    const piece = await engine.generate(sequence, { maxNew: 50, stopTokenIds: [], temperature: 1, seed: 1n, signal: AbortSignal.abort() });
    expect(piece.finish).toBe('cancelled');
    const others = Array.from({ length: 5 }, (_, i) => {
      const s = engine.openSequence();
      engine.append(s, prompt(30, i, V));
      return engine.generate(s, { maxNew: 1024, stopTokenIds: [], temperature: 1, seed: 1n });
    });
    const scores = Array.from({ length: 3 }, () => engine.score(prompt(200, 1, V)));
    engine.close();
    for (const result of await Promise.all(others)) expect(result.finish).toBe('cancelled');
    const scored = await Promise.allSettled(scores);
    expect(scored.some((s) => s.status === 'rejected' && /closed before the score ran/.test(String(s.reason)))).toBe(true);
    expect(() => engine.openSequence()).toThrow(/closed/);
    expect(() => engine.append(sequence, [1])).toThrow(/closed/);
  });
});

describe('scoring and weights', () => {
  it('scores tokens with the log-softmax of the full-sequence logits', async () => {
    const engine = start();
    const tokens = prompt(25, 6, V);
    const scores = await engine.score(tokens);
    const logits = model.logits(tokens);
    expect(scores.length).toBe(24);
    for (const t of [0, 11, 23]) {
      const row = Array.from(logits.subarray(t * V, (t + 1) * V));
      const max = Math.max(...row);
      const lse = max + Math.log(row.reduce((sum, x) => sum + Math.exp(x - max), 0));
      expect(scores[t]).toBeCloseTo(row[tokens[t + 1]] - lse, 4);
    }
  });

  it('swaps weights between batches without dropping sequences, and says which version sampled', async () => {
    const engine = start();
    const kept = engine.openSequence();
    engine.append(kept, prompt(10, 7, V));
    expect((await engine.generate(kept, { maxNew: 4, stopTokenIds: [], temperature: 1, seed: 2n })).policyVersion).toBe(0);
    expect(engine.loadWeights(other)).toBe(1);
    const later = await engine.generate(kept, { maxNew: 4, stopTokenIds: [], temperature: 1, seed: 2n });
    expect(later.policyVersion).toBe(1);
    expect(later.tokens.length).toBe(4);
    const fresh = engine.openSequence();
    const history = prompt(15, 8, V);
    engine.append(fresh, history);
    const piece = await engine.generate(fresh, { maxNew: 5, stopTokenIds: [], temperature: 1, seed: 4n });
    expect(piece.tokens).toEqual(referencePiece(Qwen3Model.load(other), history, { maxNew: 5, temperature: 1, seed: 4n }).tokens);
    expect(engine.stats().policyVersion).toBe(1);
  });
});

describe('bad input', () => {
  it('rejects it clearly and leaves other sequences alone', async () => {
    const engine = start({ maxContext: 64 });
    const good = engine.openSequence();
    engine.append(good, prompt(10, 9, V));
    const running = engine.generate(good, { maxNew: 20, stopTokenIds: [], temperature: 1, seed: 8n });
    const bad = engine.openSequence();
    expect(() => engine.append(bad, [V])).toThrow(RangeError);
    expect(() => engine.append(bad, [-1])).toThrow(RangeError);
    expect(() => engine.append(bad, new Array(65).fill(1))).toThrow(/context limit of 64/);
    await expect(engine.generate(bad, { maxNew: 5, stopTokenIds: [], temperature: 1, seed: 1n })).rejects.toThrow(/empty/);
    engine.append(bad, [1, 2]);
    await expect(engine.generate(bad, { maxNew: 0, stopTokenIds: [], temperature: 1, seed: 1n })).rejects.toThrow(RangeError);
    await expect(engine.generate(bad, { maxNew: 1025, stopTokenIds: [], temperature: 1, seed: 1n })).rejects.toThrow(RangeError);
    await expect(engine.generate(bad, { maxNew: 5, stopTokenIds: [], temperature: -1, seed: 1n })).rejects.toThrow(RangeError);
    await expect(engine.generate(good, { maxNew: 5, stopTokenIds: [], temperature: 1, seed: 1n })).rejects.toThrow(/in progress/);
    engine.release(bad);
    expect(() => engine.append(bad, [1])).toThrow(/unknown or released/);
    expect(() => engine.release(bad)).toThrow(/unknown or released/);
    await expect(engine.score([1, V])).rejects.toThrow(RangeError);
    const piece = await running;
    expect(piece.tokens.length).toBe(20);
    await vi.waitFor(() => expect(engine.stats().openSequences).toBe(1), { timeout: 30_000 });
  });

  it('refuses an unusable configuration', () => {
    expect(() => InferenceEngine.load(small, { blockSize: 10 })).toThrow(/multiple of 16/);
    expect(() => InferenceEngine.load(small, { numBlocks: 2, maxContext: 64 })).toThrow(/does not fit/);
  });
});
