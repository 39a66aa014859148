// Shared pieces of the engine tests: random checkpoints written the way `swarm model init` writes
// them (with the s3-mini tokenizer when the vocabulary allows), and the engine's reference: one
// sequence at a time through Model.logits and the engine's own sampler with the same Philox keys;
// and agents run concurrently in a chosen arrival order, for the determinism tests.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { installBuiltinTokenizer } from '../../src/model/s3-mini-tokenizer.js';
import { modelShape, qwen3ConfigJson } from '../../src/model/shapes.js';
import { sampleLogits, type InferenceEngine } from '../../src/native/engine.js';
import { initCheckpointWeights, Qwen3Model } from '../../src/native/model.js';

/** Writes a random bf16 checkpoint of `shape` into a fresh temporary folder and returns the folder. */
export function makeCheckpoint(shape: 'tiny' | 'small', seed: number): string {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), `s3-engine-${shape}-`));
  const dims = modelShape(shape);
  const tokenizer = installBuiltinTokenizer({ directory, vocabSize: dims.vocab_size });
  const config = qwen3ConfigJson({ shape: dims, torchDtype: 'bfloat16', eosTokenId: tokenizer?.eosTokenId, bosTokenId: tokenizer?.bosTokenId });
  fs.writeFileSync(path.join(directory, 'config.json'), JSON.stringify(config, null, 2) + '\n');
  initCheckpointWeights({ directory, seed: BigInt(seed), dtype: 'bf16' });
  return directory;
}

/** What the engine must produce for one piece, computed one token at a time without any cache. */
export interface ReferencePiece {
  tokens: number[];
  logprobs: number[];
  drawTokens: number[];
  drawLogprobs: number[];
  finish: 'stop' | 'length' | 'context';
}

/** Generates after `history` with full-sequence logits each step (slow, obviously right). */
export function referencePiece(
  model: Qwen3Model,
  history: readonly number[],
  options: { maxNew: number; stopTokenIds?: readonly number[]; temperature: number; seed: bigint; draws?: number; maxContext?: number },
): ReferencePiece {
  const V = model.config().vocabSize;
  const tokens = [...history];
  const out: ReferencePiece = { tokens: [], logprobs: [], drawTokens: [], drawLogprobs: [], finish: 'length' };
  const maxContext = options.maxContext ?? Infinity;
  while (out.tokens.length < options.maxNew) {
    const logits = model.logits(tokens);
    const row = logits.subarray((tokens.length - 1) * V, tokens.length * V);
    const draws = sampleLogits(row, { temperature: options.temperature, seed: options.seed, tokenIndex: tokens.length, numDraws: 1 + (options.draws ?? 0) });
    tokens.push(draws.tokens[0]);
    out.tokens.push(draws.tokens[0]);
    out.logprobs.push(draws.logprobs[0]);
    out.drawTokens.push(...draws.tokens.subarray(1));
    out.drawLogprobs.push(...draws.logprobs.subarray(1));
    if (options.stopTokenIds?.includes(draws.tokens[0])) return { ...out, finish: 'stop' };
    if (tokens.length >= maxContext) return { ...out, finish: out.tokens.length >= options.maxNew ? 'length' : 'context' };
  }
  return out;
}

/** A deterministic prompt of `length` ids below `vocab`. */
export function prompt(length: number, salt: number, vocab: number): number[] {
  return Array.from({ length }, (_, i) => (i * 7919 + salt * 104729 + 17) % vocab);
}

/** Runs agents (prompt, seed) concurrently, each for `pieces` pieces with context appended between them. */
export async function runAgents(engine: InferenceEngine, agents: readonly { prompt: number[]; seed: bigint }[], order: readonly number[], pieces = 2): Promise<number[][]> {
  const results: number[][] = agents.map(() => []);
  await Promise.all(
    order.map(async (index) => {
      const { prompt: context, seed } = agents[index];
      const sequence = engine.openSequence();
      engine.append(sequence, context);
      for (let p = 0; p < pieces; p += 1) {
        const piece = await engine.generate(sequence, { maxNew: 12 + index, stopTokenIds: [], temperature: 1, seed });
        results[index].push(...piece.tokens, -1);
        engine.append(sequence, [p + 1, p + 2, p + 3]);
      }
      engine.release(sequence);
    }),
  );
  return results;
}
