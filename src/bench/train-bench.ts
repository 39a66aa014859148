// The training benchmark behind `swarm bench train`: forward + backward of the SFT loss over one
// packed sequence and an AdamW step on the CPU trainer, with the machine's FMA peak measured in
// the same run (native/bench/train_bench.h gives the FLOPs-per-token formula).
import { benchCheckpointDirectory } from '../native/random-checkpoint.js';
import { loadAddon } from '../native/addon.js';
import { measureMachineLimits } from '../native/model.js';
import type { NativeMachineLimits } from '../native/binding.js';
import type { OptimizerStateDtype } from '../native/trainer.js';

/** The native figures of one `benchTrain` run (native/napi/train_bench.cpp). */
export interface NativeTrainBenchFigures {
  readonly tokens: number;
  readonly bestSeconds: number;
  readonly medianSeconds: number;
  readonly forwardBackwardSeconds: number;
  readonly optimizerSeconds: number;
  readonly tokensPerSecond: number;
  readonly flopsPerToken: number;
  readonly gflops: number;
  readonly peakRssBytes: number;
  readonly loss: number;
}

type TrainBenchBinding = {
  benchTrain(directory: string, options: { tokens: number; repetitions: number; warmUp: boolean; optimizerStateDtype: OptimizerStateDtype }): NativeTrainBenchFigures;
};

/** Options of `swarm bench train`. */
export interface TrainBenchOptions {
  readonly model?: string;
  readonly shape?: string;
  /** Tokens of the one packed sequence per step. */
  readonly seq: number;
  readonly repetitions: number;
  /** One untimed step first (default true; a 0.6B step takes minutes). */
  readonly warmUp?: boolean;
  /** AdamW's moments in f32 (default) or bf16. */
  readonly optimizerStateDtype?: OptimizerStateDtype;
}

/** `swarm bench train --json`. */
export interface TrainBenchReport {
  readonly model: string;
  readonly limits: NativeMachineLimits;
  readonly optimizerStateDtype: OptimizerStateDtype;
  readonly train: NativeTrainBenchFigures & { readonly fractionOfFmaPeak: number; readonly peakMemoryGiB: number };
  readonly flopsFormula: string;
}

/** The FLOPs-per-token formula the fraction of peak uses (native/bench/train_bench.h). */
export const TRAIN_FLOPS_FORMULA =
  '6 × (matmul parameters of the layers + LM head) + 12 × layers × T × heads × head_dim / 2';

/**
 * The folder, or the random bf16 checkpoint of the shape that `swarm bench forward` also uses
 * (made once under the OS temp folder). Not loaded here: the trainer loads it, so the peak memory
 * measured is the trainer's alone.
 */
function benchCheckpoint(options: { model?: string; shape?: string }): { directory: string; label: string } {
  if (options.model) return { directory: options.model, label: options.model };
  const name = options.shape ?? 'small';
  return { directory: benchCheckpointDirectory(name), label: `${name} (random bf16 weights, trained in f32)` };
}

/** Times training steps on the folder, or on the cached random bf16 checkpoint of the shape. */
export function benchTrain(options: TrainBenchOptions): TrainBenchReport {
  const { directory, label } = benchCheckpoint(options);
  const limits = measureMachineLimits();
  const binding = loadAddon().binding as unknown as TrainBenchBinding;
  const optimizerStateDtype = options.optimizerStateDtype ?? 'f32';
  const figures = binding.benchTrain(directory, { tokens: options.seq, repetitions: options.repetitions, warmUp: options.warmUp ?? true, optimizerStateDtype });
  return {
    model: label,
    limits,
    optimizerStateDtype,
    train: { ...figures, fractionOfFmaPeak: figures.gflops / limits.fmaGflops, peakMemoryGiB: figures.peakRssBytes / 2 ** 30 },
    flopsFormula: TRAIN_FLOPS_FORMULA,
  };
}
