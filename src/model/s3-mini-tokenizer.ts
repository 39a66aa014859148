// The built-in s3-mini tokenizer: a 4,096-id byte-level BPE tokenizer.json in Qwen3's format (same
// normalizer, split regex and added tokens, so the chat format is unchanged), trained by
// scripts/build-s3-mini-tokenizer.mjs from scripted task episodes and shipped in assets/s3-mini/.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from './tokenizer/index.js';

/** The most ids the s3-mini tokenizer's BPE may reach (256 bytes + merges + Qwen3's 26 added tokens); it stops earlier, at 1,671, when no pair repeats. */
export const S3_MINI_VOCAB_SIZE = 4096;

/** Path of the shipped tokenizer.json. */
export function builtinTokenizerPath(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'assets', 's3-mini', 'tokenizer.json');
}

/** Loads the shipped s3-mini tokenizer. */
export function loadBuiltinTokenizer(): Tokenizer {
  return Tokenizer.fromFile(builtinTokenizerPath());
}

/** What installBuiltinTokenizer wrote. */
export interface InstalledTokenizer {
  readonly vocabSize: number;
  readonly eosTokenId: number;
  readonly bosTokenId: number;
}

/**
 * Copies the s3-mini tokenizer.json into a checkpoint folder when a model with `vocabSize` embedding
 * rows can hold it; returns its special ids, or undefined when the vocabulary is too small.
 */
export function installBuiltinTokenizer(options: { directory: string; vocabSize: number }): InstalledTokenizer | undefined {
  const tokenizer = loadBuiltinTokenizer();
  if (options.vocabSize < tokenizer.vocabSize) return undefined;
  fs.copyFileSync(builtinTokenizerPath(), path.join(options.directory, 'tokenizer.json'));
  const id = (token: string): number => {
    const found = tokenizer.tokenToId(token);
    if (found === undefined) throw new Error(`the s3-mini tokenizer lacks ${token}`);
    return found;
  };
  return { vocabSize: tokenizer.vocabSize, eosTokenId: id('<|im_end|>'), bosTokenId: id('<|endoftext|>') };
}
