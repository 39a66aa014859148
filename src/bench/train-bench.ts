// The training benchmark behind `swarm bench train`: forward + backward of the SFT loss over one or
// more micro-batches of packed sequences and an AdamW step on the CPU trainer, at one or more matmul precisions side by
// side (the same batch, machine and run), with the machine's FMA and BF16 dot-product peaks measured
// in the same run (native/bench/train_bench.h gives the FLOPs-per-token formula).
import { benchCheckpointDirectory } from '../native/random-checkpoint.js';
import { loadAddon } from '../native/addon.js';
import { measureMachineLimits } from '../native/model.js';
import type { NativeMachineLimits } from '../native/binding.js';
import type { DeviceChoice } from '../native/device.js';
import type { MatmulPrecision, OptimizerStateDtype } from '../native/trainer.js';

/** The native figures of one `benchTrain` run (native/napi/train_bench.cpp). */
export interface NativeTrainBenchFigures {
  /** Tokens per step, in all its micro-batches. */
  readonly tokens: number;
  /** Sequences each micro-batch's tokens are packed in. */
  readonly sequences: number;
  /** Micro-batches per step (their gradients accumulated before the AdamW step). */
  readonly microBatches: number;
  /** Where the trainer ran: "cpu (avx512, 2 threads)" or "cuda:0 (NVIDIA H200, cublasLt 13.0.2)". */
  readonly device: string;
  readonly bestSeconds: number;
  readonly medianSeconds: number;
  readonly forwardBackwardSeconds: number;
  readonly optimizerSeconds: number;
  readonly tokensPerSecond: number;
  readonly flopsPerToken: number;
  readonly gflops: number;
  readonly peakRssBytes: number;
  readonly loss: number;
  /** Whether the last step's backward used the activations its forward kept (false: it recomputed each layer). */
  readonly activationsKept: boolean;
  /** On a GPU native/bench/device_peaks.cpp knows: its datasheet product ("H100 SXM5") and dense BF16 tensor-core TFLOP/s; null elsewhere. */
  readonly peakProduct: string | null;
  readonly peakBf16Tflops: number | null;
  /** Model FLOPs utilisation of a BF16-matmul run on such a GPU: gflops / 1000 / peakBf16Tflops; null otherwise (the CPU's fractions are the fractionOf… fields). */
  readonly mfu: number | null;
}

type TrainBenchBinding = {
  benchTrain(
    directory: string,
    options: { tokens: number; sequences: number; microBatches: number; device: DeviceChoice; repetitions: number; warmUp: boolean; optimizerStateDtype: OptimizerStateDtype; matmulPrecision: MatmulPrecision; activationBytes: number },
  ): NativeTrainBenchFigures;
};

/** Options of `swarm bench train`. */
export interface TrainBenchOptions {
  readonly model?: string;
  readonly shape?: string;
  /** Tokens per sequence. */
  readonly seq: number;
  /** Sequences packed into each micro-batch (default 1): a micro-batch trains seq × sequences tokens. */
  readonly sequences?: number;
  /**
   * Micro-batches per step (default 1), each with its own tokens, their gradients accumulated before
   * one AdamW step as an RL update over several team attempts does: a step trains
   * seq × sequences × microBatches tokens.
   */
  readonly microBatches?: number;
  /** Where the trainer runs (default 'auto': CUDA when usable, else the CPU). */
  readonly device?: DeviceChoice;
  readonly repetitions: number;
  /** One untimed step first (default true; a 0.6B step takes minutes). */
  readonly warmUp?: boolean;
  /** AdamW's moments in f32 (default) or bf16. */
  readonly optimizerStateDtype?: OptimizerStateDtype;
  /** Bytes the forward may keep activations in (beyond them each layer is recomputed); 0 (default): half the free memory. */
  readonly activationBytes?: number;
  /** The trainer's matmul precisions to time, one run each in this order (default ['f32']). */
  readonly precisions?: readonly MatmulPrecision[];
}

/** The figures of one precision's run, with their fractions of the machine's peaks. */
export type TrainBenchFigures = NativeTrainBenchFigures & {
  /** gflops / this CPU's FMA peak (null when the trainer ran on a GPU). */
  readonly fractionOfFmaPeak: number | null;
  /** gflops / the VDPBF16PS peak: the ceiling of BF16 products (null below the avx512bf16 level, or on a GPU). */
  readonly fractionOfBf16DotPeak: number | null;
  /** gflops / the AMX tile (TDPBF16PS) peak: the ceiling of BF16 products at the amx level (null below it, or on a GPU). */
  readonly fractionOfAmxPeak: number | null;
  readonly peakMemoryGiB: number;
};

/** `swarm bench train --json`. */
export interface TrainBenchReport {
  readonly model: string;
  readonly limits: NativeMachineLimits;
  readonly optimizerStateDtype: OptimizerStateDtype;
  /** The first run's precision and figures (the only run unless several precisions were asked for). */
  readonly matmulPrecision: MatmulPrecision;
  readonly train: TrainBenchFigures;
  /** Every run, in the order asked for; with f32 and bf16, bf16's tokens/s over f32's as bf16OverF32. */
  readonly runs: readonly { readonly matmulPrecision: MatmulPrecision; readonly train: TrainBenchFigures }[];
  readonly bf16OverF32: number | null;
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
  return { directory: benchCheckpointDirectory(name), label: `${name} (random bf16 weights, f32 master weights)` };
}

/** Times training steps on the folder, or on the cached random bf16 checkpoint of the shape. */
export function benchTrain(options: TrainBenchOptions): TrainBenchReport {
  const { directory, label } = benchCheckpoint(options);
  const limits = measureMachineLimits();
  const binding = loadAddon().binding as unknown as TrainBenchBinding;
  const optimizerStateDtype = options.optimizerStateDtype ?? 'f32';
  const precisions = options.precisions ?? ['f32'];
  if (precisions.length === 0) throw new Error('benchTrain: no precision to time');
  const runs = precisions.map((matmulPrecision) => {
    const sequences = options.sequences ?? 1;
    const figures = binding.benchTrain(directory, { tokens: options.seq * sequences, sequences, microBatches: options.microBatches ?? 1, device: options.device ?? 'auto', repetitions: options.repetitions, warmUp: options.warmUp ?? true, optimizerStateDtype, matmulPrecision, activationBytes: options.activationBytes ?? 0 });
    const onCpu = figures.device.startsWith('cpu');
    const train: TrainBenchFigures = {
      ...figures,
      fractionOfFmaPeak: onCpu ? figures.gflops / limits.fmaGflops : null,
      fractionOfBf16DotPeak: onCpu && limits.bf16DotGflops > 0 ? figures.gflops / limits.bf16DotGflops : null,
      fractionOfAmxPeak: onCpu && limits.amxGflops > 0 ? figures.gflops / limits.amxGflops : null,
      peakMemoryGiB: figures.peakRssBytes / 2 ** 30,
    };
    return { matmulPrecision, train };
  });
  const rate = (precision: MatmulPrecision) => runs.find((run) => run.matmulPrecision === precision)?.train.tokensPerSecond;
  const f32Rate = rate('f32'), bf16Rate = rate('bf16');
  return {
    model: label,
    limits,
    optimizerStateDtype,
    matmulPrecision: runs[0].matmulPrecision,
    train: runs[0].train,
    runs,
    bf16OverF32: f32Rate !== undefined && bf16Rate !== undefined ? bf16Rate / f32Rate : null,
    flopsFormula: TRAIN_FLOPS_FORMULA,
  };
}
