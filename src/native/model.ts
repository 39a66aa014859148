// Typed access to the native Qwen3 model: load a checkpoint folder, compute logits, write random
// checkpoints, and the forward-pass benchmarks. The shapes of `swarm model init` live here too.
import { loadAddon } from './addon.js';
import { NativeError } from '../errors.js';
import type { NativeBenchFigures, NativeMachineLimits, NativeModel, NativeModelConfig, NativeRunnerBenchFigures } from './binding.js';
import type { DeviceOptions } from './device.js';
import type { KvCacheDtype } from './engine.js';

/** A loaded Qwen3 checkpoint (weights memory-mapped where the dtype allows). */
export class Qwen3Model {
  private constructor(
    /** The checkpoint folder. */
    readonly directory: string,
    private readonly native: NativeModel,
  ) {}

  /** Loads config.json and the safetensors weights of a Hugging Face Qwen3 folder. */
  static load(directory: string): Qwen3Model {
    const { binding } = loadAddon();
    try {
      return new Qwen3Model(directory, new binding.Model(directory));
    } catch (error) {
      throw new NativeError(`cannot load the model in ${directory}: ${(error as Error).message}`);
    }
  }

  /** The model's shape as read from config.json. */
  config(): NativeModelConfig {
    return this.native.config();
  }

  /**
   * Logits of every position of one sequence ([T × V] row-major); token t sits at rotary position
   * startPos + t. Computed on `device` (default 'auto') from the weights in `weights` form.
   */
  logits(ids: readonly number[], startPos = 0, options: DeviceOptions = {}): Float32Array {
    try {
      return this.native.logits(Int32Array.from(ids), startPos, { ...options });
    } catch (error) {
      throw new NativeError(`logits failed for ${this.directory}: ${(error as Error).message}`);
    }
  }

  /** Times one decode step through the runner of a device (native/bench/runner_bench.h). */
  benchRunnerDecode(options: DeviceOptions & { kvCacheDtype?: KvCacheDtype; sequences: number; context: number; repetitions: number }): NativeRunnerBenchFigures {
    try {
      return loadAddon().binding.benchRunnerDecode(this.native, { ...options });
    } catch (error) {
      throw new NativeError(`bench decode failed for ${this.directory}: ${(error as Error).message}`);
    }
  }

  /** Times a prefill of every sequence through the runner of a device, stepTokens tokens per step. */
  benchRunnerPrefill(options: DeviceOptions & { sequences: number; tokens: number; stepTokens: number; repetitions: number }): NativeRunnerBenchFigures {
    try {
      return loadAddon().binding.benchRunnerPrefill(this.native, { ...options });
    } catch (error) {
      throw new NativeError(`bench forward failed for ${this.directory}: ${(error as Error).message}`);
    }
  }

  /** Times a prefill of `sequences` × `tokens` tokens. */
  benchForward(options: { sequences: number; tokens: number; repetitions: number; kvCacheDtype?: KvCacheDtype }): NativeBenchFigures {
    return loadAddon().binding.benchForward(this.native, options);
  }

  /** Times one decode step of `sequences` sequences with `context` cached positions each. */
  benchDecode(options: { sequences: number; context: number; repetitions: number; kvCacheDtype?: KvCacheDtype }): NativeBenchFigures {
    return loadAddon().binding.benchDecode(this.native, options);
  }
}

/** The machine's FMA peak and read bandwidth, measured now on every worker thread. */
export function measureMachineLimits(): NativeMachineLimits {
  return loadAddon().binding.machineLimits();
}

/** Writes model.safetensors with random weights beside the config.json already in `directory`; returns the parameter count. */
export function initCheckpointWeights(options: { directory: string; seed: bigint; dtype: 'f32' | 'bf16' | 'f16' }): number {
  try {
    return loadAddon().binding.initCheckpoint(options);
  } catch (error) {
    throw new NativeError(`model init failed in ${options.directory}: ${(error as Error).message}`);
  }
}
