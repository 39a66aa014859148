// Randomly initialised Qwen3 checkpoints in Hugging Face format (config.json, model.safetensors and,
// when the vocabulary holds it, the built-in s3-mini tokenizer.json): what `swarm model init` writes
// and where the built-in s3-mini model of `swarm train` starts.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtinTokenizerPath, installBuiltinTokenizer, type InstalledTokenizer } from '../model/s3-mini-tokenizer.js';
import { modelShape, qwen3ConfigJson, type Qwen3Shape } from '../model/shapes.js';
import { initCheckpointWeights } from './model.js';

/** config.json's torch_dtype of each weight dtype. */
export const TORCH_DTYPES = { f32: 'float32', bf16: 'bfloat16', f16: 'float16' } as const;

/** A weight dtype `swarm model init` writes. */
export type CheckpointDtype = keyof typeof TORCH_DTYPES;

/** What writeRandomCheckpoint wrote. */
export interface RandomCheckpoint {
  readonly parameters: number;
  /** The s3-mini tokenizer's special ids, when it was installed. */
  readonly tokenizer: InstalledTokenizer | undefined;
}

/** Writes a random checkpoint of `shape` into `directory` (created if missing). */
export function writeRandomCheckpoint(options: { shape: Qwen3Shape; seed: bigint; dtype: CheckpointDtype; directory: string }): RandomCheckpoint {
  fs.mkdirSync(options.directory, { recursive: true });
  const tokenizer = installBuiltinTokenizer({ directory: options.directory, vocabSize: options.shape.vocab_size });
  const config = qwen3ConfigJson({ shape: options.shape, torchDtype: TORCH_DTYPES[options.dtype], eosTokenId: tokenizer?.eosTokenId, bosTokenId: tokenizer?.bosTokenId });
  fs.writeFileSync(path.join(options.directory, 'config.json'), JSON.stringify(config, null, 2) + '\n');
  const parameters = initCheckpointWeights({ directory: options.directory, seed: options.seed, dtype: options.dtype });
  return { parameters, tokenizer };
}

/**
 * The random bf16 checkpoint (seed 0) of a named shape that the benchmarks share, made once under
 * the OS temp folder; written into a scratch folder and renamed, so concurrent benchmarks never read
 * a half-written one. The folder name carries a digest of the shape and of the built-in tokenizer it
 * may hold, so a changed shape or tokenizer gets a new checkpoint instead of a stale one.
 */
export function benchCheckpointDirectory(shapeName: string): string {
  const shape = modelShape(shapeName);
  const digest = createHash('sha256').update(JSON.stringify(shape)).update(fs.readFileSync(builtinTokenizerPath())).digest('hex').slice(0, 12);
  const directory = path.join(os.tmpdir(), `s3-bench-${shapeName}-bf16-seed0-${digest}`);
  if (fs.existsSync(path.join(directory, 'model.safetensors'))) return directory;
  const scratch = `${directory}.${process.pid}.partial`;
  fs.rmSync(scratch, { recursive: true, force: true });
  writeRandomCheckpoint({ shape, seed: 0n, dtype: 'bf16', directory: scratch });
  try {
    fs.renameSync(scratch, directory);
  } catch (error) {
    // Another process finished first: keep its folder.
    fs.rmSync(scratch, { recursive: true, force: true });
    if (!fs.existsSync(path.join(directory, 'model.safetensors'))) throw error;
  }
  return directory;
}
