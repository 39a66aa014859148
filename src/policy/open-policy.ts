// The one place a policy is opened from a description of it: a script (a task's demonstrator), the
// garbage policy, a Qwen3 checkpoint on the native inference engine, or (connectPolicy) a model on
// remote inference servers. `swarm run`, `swarm eval`,
// the SFT demonstrations and the training pipeline all open their policies here, with how summaries
// name the policy (info) and the key that says exactly what generates the tokens (an evaluation
// resumes only under the same key).
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { builtinTokenizerPath } from '../model/s3-mini-tokenizer.js';
import { Tokenizer } from '../model/tokenizer/index.js';
import { deviceMemory, resolveDevice, type DeviceOptions } from '../native/device.js';
import { InferenceEngine, type EngineOptions, type KvCacheDtype } from '../native/engine.js';
import { engineSizing } from './engine-sizing.js';
import { NativePolicy } from './native-policy.js';
import { PolicyError } from './policy-error.js';
import { RemotePolicy, type RemoteProtocol } from './remote-policy.js';
import type { Policy } from './policy.js';
import { GarbagePolicy } from './scripted/garbage-policy.js';
import { ScriptedPolicy, type Script } from './scripted/scripted-policy.js';

/** How summaries name a policy (summary.json's `policy`). */
export interface PolicyInfo {
  /** Short name for legends and tables. */
  readonly name: string;
  /** Free text: what generates the tokens. */
  readonly description: string;
  /** The checkpoint directory; null for a scripted policy. */
  readonly model: string | null;
}

/** What to open. Without tokenizerPath a script writes with the built-in s3-mini tokenizer and a model with DIR/tokenizer.json. */
export type PolicySpec =
  | {
      readonly kind: 'scripted';
      /** The script every agent runs (a task's demonstrator). */
      readonly script: Script;
      /** What it does, for the summary. */
      readonly description: string;
      readonly tokenizerPath?: string;
    }
  | { readonly kind: 'garbage'; readonly tokenizerPath?: string }
  | {
      readonly kind: 'model';
      /** The checkpoint folder (config.json, safetensors, tokenizer.json). */
      readonly directory: string;
      readonly tokenizerPath?: string;
      /** Where the engine runs (default 'auto') and in what weight format (default 'stored'). */
      readonly device?: DeviceOptions;
      /** The engine's KV cache (default f32). */
      readonly kvCacheDtype?: KvCacheDtype;
      /** The engine in lockstep with the harness (default true; docs/determinism.md). */
      readonly deterministic?: boolean;
      /** Further engine options (limits, the first policy version). */
      readonly engine?: Omit<EngineOptions, 'device' | 'weights' | 'kvCacheDtype' | 'deterministic'>;
    };

/** A model on OpenAI-compatible inference servers (ours or vLLM), opened with connectPolicy. */
export interface RemotePolicySpec {
  readonly kind: 'remote';
  /** Base URLs of the servers. */
  readonly servers: readonly string[];
  /** tokenizer.json of the served model. */
  readonly tokenizerPath: string;
  /** Default 's3' (swarm serve). */
  readonly protocol?: RemoteProtocol;
}

/** An open policy; close() frees what it holds (a model's engine). */
export interface OpenedPolicy {
  readonly policy: Policy;
  readonly info: PolicyInfo;
  /** Exactly what generates the tokens (compared when an evaluation is resumed). */
  readonly key: string;
  /** The inference engine of a model policy (weight swaps, statistics); absent otherwise. */
  readonly engine?: InferenceEngine;
  close(): void;
}

function tokenizerFile(file: string): { tokenizer: Tokenizer; path: string } {
  const resolved = path.resolve(file);
  return { tokenizer: Tokenizer.fromFile(resolved), path: resolved };
}

/** Opens the policy `spec` describes; a model without a tokenizer.json is refused before anything loads. */
export function openPolicy(spec: PolicySpec): OpenedPolicy {
  switch (spec.kind) {
    case 'scripted':
    case 'garbage': {
      const { tokenizer, path: tokenizerPath } = tokenizerFile(spec.tokenizerPath ?? builtinTokenizerPath());
      const writing = `writing with ${spec.tokenizerPath === undefined ? 'the built-in s3-mini tokenizer' : `the tokenizer ${tokenizerPath}`}`;
      if (spec.kind === 'garbage') {
        return { policy: new GarbagePolicy({ tokenizer }), info: { name: 'garbage', description: `random output; ${writing}`, model: null }, key: `garbage:${tokenizerPath}`, close: () => {} };
      }
      return {
        policy: new ScriptedPolicy({ tokenizer, script: spec.script }),
        info: { name: 'scripted', description: `${spec.description}; ${writing}`, model: null },
        key: `scripted:${spec.script.name}:${tokenizerPath}`,
        close: () => {},
      };
    }
    case 'model': {
      const directory = path.resolve(spec.directory);
      const tokenizerPath = path.resolve(spec.tokenizerPath ?? path.join(directory, 'tokenizer.json'));
      if (!fs.existsSync(tokenizerPath)) throw new ConfigError(`--model ${directory} has no tokenizer.json; pass --tokenizer FILE`);
      const weights = spec.device?.weights ?? 'stored';
      const kvCacheDtype = spec.kvCacheDtype ?? 'f32';
      const tokenizer = Tokenizer.fromFile(tokenizerPath);
      // Sequences per step and KV cache for the device, unless spec.engine gives them (policy/engine-sizing.ts).
      const sizing = engineSizing(resolveDevice(spec.device?.device), spec.engine ?? {}, () => deviceMemory().freeBytes);
      const engine = InferenceEngine.load(directory, { ...spec.engine, ...sizing, ...spec.device, kvCacheDtype, deterministic: spec.deterministic ?? true });
      const { runner, vocabSize } = engine.stats();
      if (tokenizer.vocabSize > vocabSize) {
        // Every prompt would hold ids the model has no embedding for, and each episode would fail on its first token.
        engine.close();
        throw new ConfigError(
          `${tokenizerPath} has ${tokenizer.vocabSize} token ids, more than the ${vocabSize} of the model in ${directory} (vocab_size in its config.json); ` +
            'use the tokenizer the model was trained with',
        );
      }
      const numerics = numericsKey(weights, kvCacheDtype);
      return {
        policy: new NativePolicy({ engine, tokenizer }),
        info: {
          name: path.basename(directory),
          description: `the Qwen3 checkpoint ${directory} on the native inference engine (${runner.device}, ${runner.gemm}; ${weights} weights, ${kvCacheDtype} KV cache)`,
          model: directory,
        },
        key: `model:${directory}:${tokenizerPath}${numerics}`,
        engine,
        close: () => engine.close(),
      };
    }
  }
}

/** Numerics other than the defaults (stored weights, an f32 KV cache) are part of what generates the tokens. */
function numericsKey(weights: string, kvCacheDtype: string): string {
  return `${weights === 'stored' ? '' : `:weights=${weights}`}${kvCacheDtype === 'f32' ? '' : `:kv=${kvCacheDtype}`}`;
}

/**
 * The numerics our servers sample with, from their /health: all must agree (an agent's sequence
 * may move to another server), or the tokens would depend on which server answered.
 */
async function serverNumerics(urls: readonly string[]): Promise<{ weights: string; kvCacheDtype: string }> {
  const seen: { url: string; weights: string; kvCacheDtype: string }[] = [];
  for (const url of urls) {
    let health: Record<string, unknown>;
    try {
      health = (await (await fetch(`${url}/health`, { signal: AbortSignal.timeout(30_000) })).json()) as Record<string, unknown>;
    } catch (error) {
      throw new PolicyError(`inference server ${url}: GET /health failed (${(error as Error).message})`);
    }
    if (typeof health.weights !== 'string' || typeof health.kvCacheDtype !== 'string') {
      throw new PolicyError(`inference server ${url}: /health names no weights and kvCacheDtype; is it swarm serve? (use --protocol for vLLM or SGLang)`);
    }
    seen.push({ url, weights: health.weights, kvCacheDtype: health.kvCacheDtype });
  }
  const first = seen[0];
  const other = seen.find((server) => server.weights !== first.weights || server.kvCacheDtype !== first.kvCacheDtype);
  if (other !== undefined) {
    throw new PolicyError(
      `inference servers sample with different numerics: ${first.url} with ${first.weights} weights and a ${first.kvCacheDtype} KV cache, ` +
        `${other.url} with ${other.weights} weights and a ${other.kvCacheDtype} KV cache; start them with the same --weights and --kv-dtype`,
    );
  }
  return first;
}

/** Opens any policy, remote ones included (they ask their servers what they serve first). */
export async function connectPolicy(spec: PolicySpec | RemotePolicySpec): Promise<OpenedPolicy> {
  if (spec.kind !== 'remote') return openPolicy(spec);
  const { tokenizer, path: tokenizerPath } = tokenizerFile(spec.tokenizerPath);
  const protocol = spec.protocol ?? 's3';
  const policy = await RemotePolicy.connect({ servers: spec.servers, tokenizer, protocol });
  // Which of its servers answers changes no token (remote-policy.ts), so the key names the model, the
  // tokenizer and, for our servers, their numerics; vLLM and SGLang report none, their numerics are their own.
  const numerics = protocol === 's3' ? await serverNumerics(policy.urls) : null;
  const sampling = numerics === null ? 'sampling numerics are the servers\' own' : `${numerics.weights} weights, ${numerics.kvCacheDtype} KV cache`;
  return {
    policy,
    info: {
      name: policy.model,
      description: `the model ${policy.model} on ${policy.urls.length === 1 ? 'the inference server' : `${policy.urls.length} inference servers`} ${policy.urls.join(', ')} (${protocol} protocol; ${sampling}), writing with the tokenizer ${tokenizerPath}`,
      model: null,
    },
    key: `remote:${policy.model}:${tokenizerPath}${numerics === null ? '' : numericsKey(numerics.weights, numerics.kvCacheDtype)}`,
    close: () => {},
  };
}
