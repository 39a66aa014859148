// The collective benchmark behind `swarm bench allreduce`: the host ring's all-reduce of the
// data-parallel trainer (native/core/host_ring.h), ranks as threads of one process on loopback, for
// each group size asked, beside the machine's memory read bandwidth measured in the same run (the
// anchor: a ring moves each byte through the kernel's socket buffers, copies it twice and adds it
// once, so it runs at a fraction of what memory can do). On CUDA machines with NCCL the trainer
// sums on the GPU instead; this is the CPU path and the fallback.
import { loadAddon } from '../native/addon.js';
import type { NativeHostRingBenchFigures } from '../native/binding.js';
import { measureMachineLimits } from '../native/model.js';

export interface AllReduceBenchReport {
  /** Per group size, what the ring did. */
  readonly rings: readonly NativeHostRingBenchFigures[];
  /** The anchor: read bandwidth of all threads over a large buffer, GB/s. */
  readonly memoryReadGbytesPerSecond: number;
  readonly cpus: number;
}

export function benchAllReduce(options: { ranks: readonly number[]; floats: number; repetitions: number }): AllReduceBenchReport {
  const { binding } = loadAddon();
  const limits = measureMachineLimits();
  const rings = options.ranks.map((ranks) => binding.benchHostRing({ ranks, floats: options.floats, repetitions: options.repetitions }));
  return { rings, memoryReadGbytesPerSecond: limits.readGBytesPerSecond, cpus: limits.threads };
}
