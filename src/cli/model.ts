// `swarm model init|logits|grad`: random Qwen3 checkpoints in Hugging Face format, the logits of a
// token sequence for checking numerics, and the gradient of a weighted next-token loss (JSON
// shapes documented in docs/cli.md).
import type { Command } from 'commander';
import { ConfigError } from '../errors.js';
import { Qwen3Model } from '../native/model.js';
import { TORCH_DTYPES, writeRandomCheckpoint, type CheckpointDtype } from '../native/random-checkpoint.js';
import { Trainer } from '../native/trainer.js';
import { modelShape } from '../model/shapes.js';
import { addDeviceFlags, parseDeviceFlags, parseIntegerFlag, parseIntegerListFlag } from './options.js';


/** Parses a comma-separated list of finite numbers, e.g. "1,0.5,0". */
function parseNumberListFlag(flag: string, value: string): number[] {
  const parts = value.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => p.length === 0 || !Number.isFinite(Number(p)))) {
    throw new ConfigError(`${flag} must be a comma-separated list of numbers, got "${value}"`);
  }
  return parts.map(Number);
}

/** Registers `swarm model init`, `swarm model logits` and `swarm model grad`. */
export function registerModel(program: Command): void {
  const model = program.command('model').description('make and inspect Qwen3 checkpoints');

  model
    .command('init')
    .description('write a randomly initialised Qwen3 checkpoint (config.json + model.safetensors) in Hugging Face format')
    .requiredOption('--shape <name>', 'tiny | small | s3-mini | qwen3-0.6b | qwen3-1.7b')
    .option('--seed <s>', 'random seed (a non-negative integer)', '0')
    .option('--dtype <dtype>', 'weight dtype: bf16 | f32 | f16', 'bf16')
    .requiredOption('--out <dir>', 'the folder to write')
    .action((options: { shape: string; seed: string; dtype: string; out: string }) => {
      if (!(options.dtype in TORCH_DTYPES)) throw new ConfigError(`--dtype must be bf16, f32 or f16; got "${options.dtype}"`);
      const dtype = options.dtype as CheckpointDtype;
      const written = writeRandomCheckpoint({ shape: modelShape(options.shape), seed: BigInt(parseIntegerFlag('--seed', options.seed)), dtype, directory: options.out });
      process.stdout.write(
        `wrote ${options.out}: ${options.shape}, ${(written.parameters / 1e6).toFixed(2)}M parameters, ${dtype}` +
          (written.tokenizer ? `, s3-mini tokenizer (${written.tokenizer.vocabSize} tokens)` : ', no tokenizer (vocabulary too small for s3-mini)') +
          '\n',
      );
    });

  addDeviceFlags(
    model
      .command('logits')
      .description('print the logits of every position of a token sequence')
      .requiredOption('--model <dir>', 'a Hugging Face Qwen3 folder')
      .requiredOption('--ids <list>', 'comma-separated token ids, e.g. 1,2,3')
      .option('--start-pos <p>', 'rotary position of the first id (Hugging Face position_ids = p, p+1, ...)', '0')
      .option('--json', 'print {"logits": [[...], ...]}, one float32 row per position'),
  ).action((options: { model: string; ids: string; startPos: string; json?: boolean; device: string; weights: string }) => {
      const ids = parseIntegerListFlag('--ids', options.ids);
      const startPos = parseIntegerFlag('--start-pos', options.startPos);
      const device = parseDeviceFlags(options);
      const loaded = Qwen3Model.load(options.model);
      const vocab = loaded.config().vocabSize;
      for (const id of ids) {
        if (id >= vocab) throw new ConfigError(`--ids: token id ${id} is outside the model's vocabulary [0, ${vocab})`);
      }
      const flat = loaded.logits(ids, startPos, device);
      const rows = ids.map((_, t) => Array.from(flat.subarray(t * vocab, (t + 1) * vocab)));
      if (options.json) {
        process.stdout.write(JSON.stringify({ logits: rows }) + '\n');
        return;
      }
      for (const [t, row] of rows.entries()) {
        let best = 0;
        for (let i = 1; i < row.length; i += 1) if (row[i] > row[best]) best = i;
        process.stdout.write(`position ${startPos + t}: id ${ids[t]} → argmax ${best} (logit ${row[best].toFixed(4)})\n`);
      }
    });

  model
    .command('grad')
    .description('write the gradient of −Σ mask·weight·log p(next token) for every parameter and print {"loss": ...}')
    .requiredOption('--model <dir>', 'a Hugging Face Qwen3 folder')
    .requiredOption('--ids <list>', 'comma-separated token ids (T of them)')
    .requiredOption('--mask <list>', 'T−1 numbers: entry t masks log p(ids[t+1] | ids[0..t])')
    .requiredOption('--weights <list>', 'T−1 numbers: entry t weights log p(ids[t+1] | ids[0..t])')
    .requiredOption('--out <file>', 'the F32 safetensors file to write (same tensor names as the checkpoint)')
    .option('--threads <n>', 'worker threads (default: all cores)')
    .action(async (options: { model: string; ids: string; mask: string; weights: string; out: string; threads?: string }) => {
      const ids = parseIntegerListFlag('--ids', options.ids);
      const mask = parseNumberListFlag('--mask', options.mask);
      const weights = parseNumberListFlag('--weights', options.weights);
      if (ids.length < 2) throw new ConfigError(`--ids needs at least 2 tokens, got ${ids.length}`);
      if (mask.length !== ids.length - 1) {
        throw new ConfigError(`--mask has ${mask.length} entries but --ids has ${ids.length} tokens; it needs ${ids.length - 1} (one per next-token prediction)`);
      }
      if (weights.length !== ids.length - 1) {
        throw new ConfigError(`--weights has ${weights.length} entries but --ids has ${ids.length} tokens; it needs ${ids.length - 1} (one per next-token prediction)`);
      }
      const threads = options.threads === undefined ? 0 : parseIntegerFlag('--threads', options.threads, 1);
      const trainer = Trainer.open(options.model, { threads });
      const coef = mask.map((m, t) => m * weights[t]);
      const result = await trainer.accumulate('sft', [{ tokens: ids, coef }]);
      trainer.saveGradients(options.out);
      process.stdout.write(JSON.stringify({ loss: result.loss, tokens: result.tokens }) + '\n');
    });
}
