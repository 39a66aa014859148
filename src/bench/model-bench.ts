// The forward-pass benchmarks behind `swarm bench forward|decode`: a model (a checkpoint folder, or
// a random one of a named shape made once and cached), the machine's own limits measured in the
// same run, and each figure as a fraction of those limits (JSON shape in docs/cli.md).
import { benchCheckpointDirectory } from '../native/random-checkpoint.js';
import os from 'node:os';
import { measureMachineLimits, Qwen3Model } from '../native/model.js';
import { loadAddon } from '../native/addon.js';
import type { NativeBenchFigures, NativeMachineLimits, NativeRunnerBenchFigures } from '../native/binding.js';
import type { DeviceOptions, RunnerDescription } from '../native/device.js';
import { kvCacheBytesPerPosition, type KvCacheDtype } from '../native/engine.js';

/** Which model to benchmark: a folder, or a shape to initialise randomly (bf16, seed 0). */
export interface BenchModelOptions {
  readonly model?: string;
  readonly shape?: string;
}

/** Loads the folder, or makes (once, cached under the OS temp folder) a random bf16 checkpoint of the shape. */
export function benchModel(options: BenchModelOptions): { model: Qwen3Model; label: string } {
  if (options.model) return { model: Qwen3Model.load(options.model), label: options.model };
  const name = options.shape ?? 'qwen3-0.6b';
  return { model: Qwen3Model.load(benchCheckpointDirectory(name)), label: `${name} (random bf16 weights)` };
}

/** One prefill measurement with its share of the FMA peak and of its SIMD level's own peak. */
export interface PrefillFigure extends NativeBenchFigures {
  readonly tokens: number;
  readonly fractionOfFmaPeak: number;
  /** gflops over the peak of the level's matmul instruction: the AMX tile peak at amx, the BF16 dot-product peak at avx512bf16 (bf16 weights), else the FMA peak. */
  readonly fractionOfLevelPeak: number;
}

/** The peak the level's matmuls run at: AMX tiles where measured (amx), else VDPBF16PS where measured (avx512bf16), else f32 FMA. */
export function levelPeakGflops(limits: NativeMachineLimits): number {
  if (limits.amxGflops > 0) return limits.amxGflops;
  return limits.bf16DotGflops > 0 ? limits.bf16DotGflops : limits.fmaGflops;
}

/** One decode measurement with its share of the read bandwidth and its speed-up over one sequence. */
export interface DecodeFigure extends NativeBenchFigures {
  readonly context: number;
  readonly fractionOfReadBandwidth: number;
  readonly speedupOverOneSequence: number | null;
  readonly skipped?: string;
}

/** `swarm bench forward --json`. */
export interface ForwardBenchReport {
  readonly model: string;
  readonly limits: NativeMachineLimits;
  /** Element type of the KV cache the prefill writes and attends over. */
  readonly kvCacheDtype: KvCacheDtype;
  readonly prefill: PrefillFigure[];
}

/** `swarm bench decode --json`. */
export interface DecodeBenchReport {
  readonly model: string;
  readonly limits: NativeMachineLimits;
  /** Element type of the KV cache the steps read (kvGBytes counts its bytes, fp8 row scales included). */
  readonly kvCacheDtype: KvCacheDtype;
  readonly decode: DecodeFigure[];
}

/** Prefill of each (sequences × tokens) shape, e.g. 1×512 and 4×512. */
export function benchForward(
  options: BenchModelOptions & { shapes: readonly [number, number][]; repetitions: number; kvCacheDtype?: KvCacheDtype },
): ForwardBenchReport {
  const { model, label } = benchModel(options);
  const limits = measureMachineLimits();
  const kvCacheDtype = options.kvCacheDtype ?? 'f32';
  const prefill = options.shapes.map(([sequences, tokens]) => {
    const figures = model.benchForward({ sequences, tokens, repetitions: options.repetitions, kvCacheDtype });
    return { ...figures, tokens, fractionOfFmaPeak: figures.gflops / limits.fmaGflops, fractionOfLevelPeak: figures.gflops / levelPeakGflops(limits) };
  });
  return { model: label, limits, kvCacheDtype, prefill };
}

/** One decode step at each concurrency with `context` cached positions per sequence. */
export function benchDecode(
  options: BenchModelOptions & { sequences: readonly number[]; context: number; repetitions: number; kvCacheDtype?: KvCacheDtype },
): DecodeBenchReport {
  const { model, label } = benchModel(options);
  const limits = measureMachineLimits();
  const config = model.config();
  const kvCacheDtype = options.kvCacheDtype ?? 'f32';
  const kvBytesPerSequence =
    options.context * kvCacheBytesPerPosition({ layers: config.numHiddenLayers, kvHeads: config.numKeyValueHeads, headDim: config.headDim }, kvCacheDtype);
  const decode: DecodeFigure[] = [];
  let single: number | null = null;
  for (const sequences of options.sequences) {
    const kvBytes = kvBytesPerSequence * sequences;
    if (kvBytes > 0.6 * os.freemem()) {
      const skipped = `the ${kvCacheDtype} KV cache would take ${(kvBytes / 2 ** 30).toFixed(1)} GiB, over 60% of free memory`;
      decode.push({ sequences, context: options.context, skipped, tokensPerStep: 0, bestSeconds: 0, medianSeconds: 0, tokensPerSecond: 0, gflops: 0, weightGBytesPerSecond: 0, kvGBytes: kvBytes / 1e9, fractionOfReadBandwidth: 0, speedupOverOneSequence: null });
      continue;
    }
    const figures = model.benchDecode({ sequences, context: options.context, repetitions: options.repetitions, kvCacheDtype });
    if (sequences === 1) single = figures.tokensPerSecond;
    // Bytes a step must read: the weights once plus every sequence's cached keys and values.
    const bytesPerStep = figures.weightGBytesPerSecond * figures.medianSeconds * 1e9 + figures.kvGBytes * 1e9;
    decode.push({
      ...figures,
      context: options.context,
      fractionOfReadBandwidth: bytesPerStep / figures.medianSeconds / 1e9 / limits.readGBytesPerSecond,
      speedupOverOneSequence: single === null ? null : figures.tokensPerSecond / single,
    });
  }
  return { model: label, limits, kvCacheDtype, decode };
}

/** One decode step on a device with its share of the bandwidth roofline (bytes read per step ÷ copy bandwidth). */
export interface DeviceDecodeFigure {
  readonly sequences: number;
  readonly context: number;
  readonly medianSeconds: number;
  readonly tokensPerSecond: number;
  readonly bytesPerStep: number;
  readonly rooflineTokensPerSecond: number;
  readonly fractionOfRoofline: number;
}

/** `swarm bench decode --device cuda --json` (and --weights fp8 on any device). */
export interface DeviceDecodeBenchReport {
  readonly model: string;
  readonly runner: RunnerDescription;
  readonly kvCacheDtype: KvCacheDtype;
  /** Device-to-device copy bandwidth measured in the same run (bytes read plus written per second); 0 on the CPU. */
  readonly copyBandwidthGBytesPerSecond: number;
  readonly decode: DeviceDecodeFigure[];
}

/** One prefill through a runner, with its model FLOPs and, on a known GPU with BF16 products, its MFU. */
export interface DeviceForwardFigure {
  readonly sequences: number;
  readonly tokens: number;
  readonly stepTokens: number;
  readonly medianSeconds: number;
  readonly tokensPerSecond: number;
  /** Model FLOPs of the prefill (matmuls, causal attention, last-token LM head) and their rate. */
  readonly flops: number;
  readonly tflops: number;
  /** The GPU's datasheet product and dense BF16 peak (null: the CPU, or a GPU not known by name). */
  readonly peakProduct: string | null;
  readonly peakBf16Tflops: number | null;
  /** tflops over that peak where the products are BF16; null otherwise. */
  readonly mfu: number | null;
}

/** `swarm bench forward --device cuda --json` (and --weights fp8 on any device). */
export interface DeviceForwardBenchReport {
  readonly model: string;
  readonly runner: RunnerDescription;
  readonly prefill: DeviceForwardFigure[];
}

/** Whether a bench goes through a model runner (a device other than the CPU, or FP8 weights) instead of the CPU forward pass. */
export function usesRunnerBench(device: DeviceOptions, resolved: 'cpu' | 'cuda'): boolean {
  return resolved === 'cuda' || device.weights === 'fp8';
}

/** Decode steps through the runner of `device`, each against the roofline of the copy bandwidth measured in the same run. */
export function benchDeviceDecode(
  options: BenchModelOptions & { device: DeviceOptions; resolved: 'cpu' | 'cuda'; sequences: readonly number[]; context: number; repetitions: number; kvCacheDtype?: KvCacheDtype },
): DeviceDecodeBenchReport {
  const { model, label } = benchModel(options);
  const { binding } = loadAddon();
  const bandwidth = options.resolved === 'cuda' ? binding.deviceCopyBandwidth() : measureMachineLimits().readGBytesPerSecond * 1e9;
  const kvCacheDtype = options.kvCacheDtype ?? 'f32';
  let runner: RunnerDescription | undefined;
  const decode = options.sequences.map((sequences) => {
    const f: NativeRunnerBenchFigures = model.benchRunnerDecode({ ...options.device, kvCacheDtype, sequences, context: options.context, repetitions: options.repetitions });
    runner = f.runner;
    const rooflineTokensPerSecond = sequences / (f.bytesPerStep / bandwidth);
    return { sequences, context: options.context, medianSeconds: f.medianSeconds, tokensPerSecond: f.tokensPerSecond, bytesPerStep: f.bytesPerStep, rooflineTokensPerSecond, fractionOfRoofline: f.tokensPerSecond / rooflineTokensPerSecond };
  });
  return { model: label, runner: runner ?? { device: options.resolved, gemm: '', attention: '', graphs: '' }, kvCacheDtype, copyBandwidthGBytesPerSecond: bandwidth / 1e9, decode };
}

/** Prefill of each (sequences × tokens) shape through the runner of `device`, in steps of at most stepTokens tokens. */
export function benchDeviceForward(
  options: BenchModelOptions & { device: DeviceOptions; shapes: readonly [number, number][]; stepTokens: number; repetitions: number },
): DeviceForwardBenchReport {
  const { model, label } = benchModel(options);
  let runner: RunnerDescription | undefined;
  const prefill = options.shapes.map(([sequences, tokens]) => {
    const f = model.benchRunnerPrefill({ ...options.device, sequences, tokens, stepTokens: Math.max(options.stepTokens, tokens), repetitions: options.repetitions });
    runner = f.runner;
    return {
      sequences, tokens, stepTokens: Math.max(options.stepTokens, tokens), medianSeconds: f.medianSeconds, tokensPerSecond: f.tokensPerSecond,
      flops: f.flops, tflops: f.flops / f.medianSeconds / 1e12, peakProduct: f.peakProduct, peakBf16Tflops: f.peakBf16Tflops, mfu: f.mfu,
    };
  });
  return { model: label, runner: runner ?? { device: '', gemm: '', attention: '', graphs: '' }, prefill };
}
