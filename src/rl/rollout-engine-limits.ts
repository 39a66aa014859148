// The in-process rollout engine's limits for a training run: the config's context length, and the
// batch and KV cache sized for the device. On the CPU the engine keeps its 1 GiB cache and 64
// sequences a step (a CPU is saturated well before that). On CUDA a step takes up to 256 sequences
// (the decode graphs' largest) and the cache half the device memory free when the rollout engine
// opens, after the trainer took its parameters, gradients and moments: the other half stays for the
// trainer's activations (which it sizes from what is free at each micro-batch), the KL penalty's
// reference policy and workspace. rolloutKvCacheBytes and rolloutMaxSequences set either instead.
// A cache that fills preempts sequences and recomputes them later: the same tokens, more time.
import type { TrainConfig } from '../config/train-config.js';

/** Sequences per engine step on the CPU and on CUDA, unless rolloutMaxSequences says. */
export const ROLLOUT_MAX_SEQUENCES = { cpu: 64, cuda: 256 } as const;
/** Share of the device memory free at the engine's start that its KV cache takes on CUDA. */
export const ROLLOUT_KV_SHARE_OF_FREE_DEVICE_MEMORY = 0.5;

/** The engine options of rolloutEngineLimits (kvCacheBytes absent: the engine's default). */
export interface RolloutEngineLimits {
  readonly maxContext: number;
  readonly maxSequences: number;
  readonly kvCacheBytes?: number;
}

/**
 * The rollout engine's limits on `device`; `freeDeviceBytes` is asked only on CUDA without
 * rolloutKvCacheBytes (deviceMemory().freeBytes where the engine is about to open).
 */
export function rolloutEngineLimits(
  config: Pick<TrainConfig, 'contextLength' | 'rolloutKvCacheBytes' | 'rolloutMaxSequences'>,
  device: 'cpu' | 'cuda',
  freeDeviceBytes: () => number,
): RolloutEngineLimits {
  const maxSequences = config.rolloutMaxSequences ?? ROLLOUT_MAX_SEQUENCES[device];
  const limits = { maxContext: config.contextLength, maxSequences };
  if (config.rolloutKvCacheBytes !== null) return { ...limits, kvCacheBytes: config.rolloutKvCacheBytes };
  if (device === 'cpu') return limits;
  return { ...limits, kvCacheBytes: Math.floor(ROLLOUT_KV_SHARE_OF_FREE_DEVICE_MEMORY * freeDeviceBytes()) };
}
