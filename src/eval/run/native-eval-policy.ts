// The policy `swarm eval --model DIR` evaluates: a Qwen3 checkpoint served by the native inference
// engine, writing with the checkpoint's own tokenizer.json (or --tokenizer).
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../../errors.js';
import { Tokenizer } from '../../model/tokenizer/index.js';
import type { DeviceOptions } from '../../native/device.js';
import { InferenceEngine, type KvCacheDtype } from '../../native/engine.js';
import { NativePolicy } from '../../policy/native-policy.js';
import type { EvalPolicy } from './scripted-eval-policy.js';

/** Options of nativeEvalPolicy. */
export interface NativeEvalPolicyOptions {
  /** The checkpoint folder (config.json, safetensors, tokenizer.json). */
  readonly directory: string;
  /** tokenizer.json to use instead of the checkpoint's. */
  readonly tokenizerPath?: string;
  /** Where the engine runs (default 'auto') and in what weight format. */
  readonly device?: DeviceOptions;
  /** The engine in lockstep with the harness (default true; EngineOptions.deterministic). */
  readonly deterministic?: boolean;
  /** The engine's KV cache (default f32). */
  readonly kvCacheDtype?: KvCacheDtype;
}

/** Loads the checkpoint into an inference engine; close() releases the engine. */
export function nativeEvalPolicy(options: NativeEvalPolicyOptions): EvalPolicy {
  const directory = path.resolve(options.directory);
  const tokenizerPath = path.resolve(options.tokenizerPath ?? path.join(directory, 'tokenizer.json'));
  if (!fs.existsSync(tokenizerPath)) throw new ConfigError(`--model ${directory} has no tokenizer.json; pass --tokenizer FILE`);
  const weights = options.device?.weights ?? 'stored';
  const kvCacheDtype = options.kvCacheDtype ?? 'f32';
  const engine = InferenceEngine.load(directory, { ...options.device, kvCacheDtype, deterministic: options.deterministic ?? true });
  const runner = engine.stats().runner;
  // Numerics other than the defaults are part of what is evaluated (an evaluation resumes only under the same).
  const numerics = `${weights === 'stored' ? '' : `:weights=${weights}`}${kvCacheDtype === 'f32' ? '' : `:kv=${kvCacheDtype}`}`;
  return {
    policy: new NativePolicy({ engine, tokenizer: Tokenizer.fromFile(tokenizerPath) }),
    info: {
      name: path.basename(directory),
      description: `the Qwen3 checkpoint ${directory} on the native inference engine (${runner.device}, ${runner.gemm}; ${weights} weights, ${kvCacheDtype} KV cache)`,
      model: directory,
    },
    key: `model:${directory}:${tokenizerPath}${numerics}`,
    close: () => engine.close(),
  };
}
