// How big an inference engine opened for a model policy is (policy/open-policy.ts: `swarm run`,
// `swarm eval`, the rollouts and evaluations of `swarm train`): sequences per step and KV cache, by
// device. On the CPU the engine keeps its 1 GiB cache and 64 sequences a step (a CPU is saturated
// well before that). On CUDA a step takes up to 256 sequences (the decode graphs' largest) and the
// cache half the device memory free when the engine opens: in `swarm train` the trainer has taken
// its parameters, gradients and moments by then, and the other half stays for its activations (which
// it sizes from what is free at each micro-batch), the KL penalty's reference engine and workspace.
// Given values (a config's rolloutKvCacheBytes and rolloutMaxSequences) are taken as they are. A cache
// that fills preempts sequences and recomputes them later: the same tokens, more time.

/** Sequences per engine step on the CPU and on CUDA, unless told otherwise. */
export const ENGINE_MAX_SEQUENCES = { cpu: 64, cuda: 256 } as const;
/** Share of the device memory free at the engine's start that its KV cache takes on CUDA. */
export const KV_SHARE_OF_FREE_DEVICE_MEMORY = 0.5;

/** An engine's size (kvCacheBytes absent: the engine's default). */
export interface EngineSizing {
  readonly maxSequences: number;
  readonly kvCacheBytes?: number;
}

/**
 * The engine's size on `device`, `given` values first; `freeDeviceBytes` is asked only on CUDA
 * without a given cache size (deviceMemory().freeBytes, where the engine is about to open).
 */
export function engineSizing(
  device: 'cpu' | 'cuda',
  given: { readonly kvCacheBytes?: number | null; readonly maxSequences?: number | null },
  freeDeviceBytes: () => number,
): EngineSizing {
  const maxSequences = given.maxSequences ?? ENGINE_MAX_SEQUENCES[device];
  if (given.kvCacheBytes !== undefined && given.kvCacheBytes !== null) return { maxSequences, kvCacheBytes: given.kvCacheBytes };
  if (device === 'cpu') return { maxSequences };
  return { maxSequences, kvCacheBytes: Math.floor(KV_SHARE_OF_FREE_DEVICE_MEMORY * freeDeviceBytes()) };
}
