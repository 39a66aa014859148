// The TypeScript shape of what the native addon exports (native/napi/). One interface per object.

/** CPU facts reported by native/core/cpu_features. */
export interface NativeCpuInfo {
  brand: string;
  logicalCores: number;
  threads: number;
  features: Record<string, boolean>;
  simdLevel: string;
  /** The CPU engine's linear layers: BF16 and FP8 weights packed into panels once per weights object (avx512bf16), or read as stored. */
  inferenceMatmul: string;
  /** The CPU trainer's products at each precision.train: e.g. {f32: 'f32 avx2', bf16: 'f32 avx2 on BF16-rounded operands (no AVX512-BF16)'}. */
  trainMatmul: { f32: string; bf16: string };
}

/** One CUDA device. */
export interface NativeCudaDevice {
  index: number;
  name: string;
  totalMemory: number;
  computeCapability: string;
  multiprocessors: number;
  /** The datasheet product and dense BF16 tensor-core TFLOP/s behind the benchmarks' MFU (native/bench/device_peaks.cpp); null for a GPU not in its table. */
  peakProduct: string | null;
  peakBf16Tflops: number | null;
}

/** The CUDA runtime's view of this machine. */
export interface NativeCudaInfo {
  compiled: boolean;
  deviceCount: number;
  driverVersion: number;
  runtimeVersion: number;
  devices: NativeCudaDevice[];
  error: string;
  /** Whether the model can run on CUDA here (what --device auto picks), and why not when it cannot. */
  usable: boolean;
  unusableReason: string;
  /** The GEMM path a CUDA runner takes. */
  gemm: {
    cublasLtVersion: string;
    cublasLtPath: string;
    /** FP8 weights multiply block-scaled in cuBLASLt (≥ 12.9, sm_90); otherwise they are widened to BF16 first. */
    fp8BlockScaling: boolean;
    fp8Path: string;
    error: string;
  };
  /** The attention kernels a CUDA runner uses. */
  attention: string;
  /** Whether a CUDA runner replays decode steps from CUDA graphs (S3_CUDA_GRAPHS), or why not. */
  graphs: string;
  /** NCCL for data-parallel collectives (native/cuda/nccl.h): its version and file once opened (≥ 2.18), else why not. */
  nccl: { version: string; path: string; error: string };
}

/** Whether an optional library could be opened with dlopen. */
export interface NativeLibraryProbe {
  found: boolean;
  path: string;
  error: string;
}

/** Everything `swarm doctor` needs from the addon. */
export interface NativeSystemInfo {
  addonVersion: string;
  buildSystem: string;
  compiler: string;
  napiVersion: number;
  cpu: NativeCpuInfo;
  cuda: NativeCudaInfo;
  libraries: { cublasLt: NativeLibraryProbe; nccl: NativeLibraryProbe };
}

/** A Qwen3 config.json as the native loader read it. */
export interface NativeModelConfig {
  hiddenSize: number;
  numHiddenLayers: number;
  numAttentionHeads: number;
  numKeyValueHeads: number;
  headDim: number;
  intermediateSize: number;
  vocabSize: number;
  maxPositionEmbeddings: number;
  ropeTheta: number;
  rmsNormEps: number;
  tieWordEmbeddings: boolean;
  torchDtype: string;
  fp8Blockwise: boolean;
}

/** native Model: a loaded checkpoint. */
export interface NativeModel {
  config(): NativeModelConfig;
  logits(ids: Int32Array, startPos: number, options?: { device?: 'auto' | 'cpu' | 'cuda'; weights?: 'stored' | 'bf16' | 'fp8' }): Float32Array;
}

/** Timing of one benchmarked forward step (median over repetitions). */
export interface NativeBenchFigures {
  sequences: number;
  tokensPerStep: number;
  bestSeconds: number;
  medianSeconds: number;
  tokensPerSecond: number;
  gflops: number;
  weightGBytesPerSecond: number;
  kvGBytes: number;
}

/** What a model runner computes with (engine/model_runner.h RunnerDescription). */
export interface NativeRunnerDescription {
  /** "cpu", or "cuda:0 (NVIDIA H200)". */
  device: string;
  /** The GEMM path, e.g. "cpu avx512" or "cublasLt 13.0.2 bf16". */
  gemm: string;
  /** The attention kernels, e.g. "cpu avx512" or "cuda split-KV paged attention". */
  attention: string;
  /** "none (cpu)", "off" (or why), or the decode steps CUDA graphs serve and how often they replayed. */
  graphs: string;
}

/** Timing of runner steps (decode: one step; prefill: every sequence) on any device. */
export interface NativeRunnerBenchFigures {
  sequences: number;
  /** Context (decode) or prompt length (prefill) per sequence. */
  tokens: number;
  medianSeconds: number;
  bestSeconds: number;
  tokensPerSecond: number;
  /** Decode: weight and KV bytes one step reads. */
  bytesPerStep: number;
  /** Prefill: model FLOPs of the whole prefill (0 for decode). */
  flops: number;
  /** Prefill on a GPU known by name: its datasheet product and dense BF16 TFLOP/s; null elsewhere. */
  peakProduct: string | null;
  peakBf16Tflops: number | null;
  /** Prefill with BF16 products on a known GPU: model FLOPs utilisation against that peak; null elsewhere. */
  mfu: number | null;
  runner: NativeRunnerDescription;
}

/** The machine's own limits, measured in the same run as a benchmark. */
export interface NativeMachineLimits {
  fmaGflops: number;
  /** VDPBF16PS peak (2 flops per product) at the avx512bf16 level, where BF16 and FP8 weights are multiplied in BF16; 0 below it. */
  bf16DotGflops: number;
  /** AMX tile (TDPBF16PS) peak at the amx level, where BF16 and FP8 weights are multiplied on tiles; 0 below it. */
  amxGflops: number;
  /**
   * The same tile products with their operand tiles reloaded from L1 every round, as the tile
   * kernels' inner loop does: the ceiling those kernels can reach on this host now (on a shared host
   * it can be far below amxGflops); 0 below the amx level.
   */
  amxLoadedGflops: number;
  readGBytesPerSecond: number;
  /** The run-time SIMD level the kernels ran at (cpuInfo simdLevel: S3_SIMD caps it). */
  simd: string;
  threads: number;
}

/** Limits of a native Engine (all optional; see src/native/engine.ts). */
export interface NativeEngineOptions {
  /** Positions per KV block (a multiple of 16; default 16). */
  blockSize?: number;
  /** KV blocks in the cache (default: as many as kvCacheBytes holds). */
  numBlocks?: number;
  /** Size of the KV cache when numBlocks is not given (default 1 GiB). */
  kvCacheBytes?: number;
  /**
   * Element type of cached keys and values (default 'f32'). 'bf16' halves the cache (twice the
   * blocks in kvCacheBytes) and the bytes a decode step reads; keys and values are rounded to bf16
   * when stored. 'fp8' stores each position's head_dim keys (and values) of a KV head as e4m3 bytes
   * with one f32 scale (max |x| / 448), a quarter of f32 plus 4 bytes per row (3.6× the blocks of
   * f32 at head_dim 32, 3.9× at 128); attention reads the bytes directly. Scores read the same kind of cache.
   */
  kvCacheDtype?: 'f32' | 'bf16' | 'fp8';
  /** Longest sequence (default: the model's positions, capped by the cache). */
  maxContext?: number;
  /** Sequences in one batch (default 64). */
  maxSequences?: number;
  /** New tokens in one batch (default 512). */
  maxBatchTokens?: number;
  /**
   * Automatic prefix caching (default true): a sequence whose history starts with full KV blocks
   * another live sequence computed with the same weights attaches them instead of computing them
   * (native/engine/prefix_cache.h). No token or log-prob changes; stats().prefixCacheHitTokens counts the reuse.
   */
  prefixCaching?: boolean;
  /** 'auto' (default), 'cpu' or 'cuda' (refused with the reason where CUDA cannot run). */
  device?: 'auto' | 'cpu' | 'cuda';
  /** 'stored' (default), 'bf16' (f32 tensors rounded to BF16 at load) or 'fp8' (linear weights quantized to FP8 with 128×128 block scales at load). */
  weights?: 'stored' | 'bf16' | 'fp8';
  /** The version pieces sampled by the weights loaded first report (default 0; a resumed run continues its count). */
  policyVersion?: number;
  /** Lockstep mode: no step runs until proceed() says every delivered turn was handled (native/engine/engine.h). */
  lockstep?: boolean;
  /** Called with each turn's number after its results' promises are settled. */
  onTurn?: (turn: number) => void;
}

/** One generation request as the native engine takes it. */
export interface NativeGenerateOptions {
  maxNew: number;
  stopTokenIds: Int32Array;
  temperature: number;
  seed: bigint | number;
  draws?: number;
}

/** A finished generation piece (or score: logprobs only). */
export interface NativeEngineResult {
  id: number;
  finish: 'stop' | 'length' | 'context' | 'cancelled';
  tokens: Int32Array;
  logprobs: Float32Array;
  drawTokens: Int32Array;
  drawLogprobs: Float32Array;
  policyVersion: number;
}

/** What the engine reports about itself. */
export interface NativeEngineStats {
  vocabSize: number;
  maxSequences: number;
  maxBatchTokens: number;
  maxContext: number;
  blockSize: number;
  running: number;
  waiting: number;
  idle: number;
  openSequences: number;
  preemptions: number;
  kvBlocksUsed: number;
  kvBlocksTotal: number;
  kvCacheDtype: 'f32' | 'bf16' | 'fp8';
  /** Bytes one KV block takes over every layer, keys and values (fp8: row scales included). */
  kvBytesPerBlock: number;
  steps: number;
  generatedTokens: number;
  processedTokens: number;
  /** History positions taken from the prefix cache instead of computed (in none of processedTokens). */
  prefixCacheHitTokens: number;
  busySeconds: number;
  tokensPerSecond: number;
  policyVersion: number;
  /** Result turns delivered (each step, or reaping, that finished something). */
  turns: number;
  /** Lockstep: seconds the engine had work but waited for JavaScript to handle a turn. */
  heldSeconds: number;
  /** The device the engine runs on: 'cpu' or 'cuda'. */
  device: 'cpu' | 'cuda';
  /** What its model runner computes with. */
  runner: NativeRunnerDescription;
}

/** native Engine: the shared inference server (native/engine). */
export interface NativeEngine {
  openSequence(): number;
  append(sequence: number, tokens: Int32Array): void;
  generate(sequence: number, options: NativeGenerateOptions): { id: number; promise: Promise<NativeEngineResult> };
  cancel(requestId: number): void;
  release(sequence: number): void;
  score(tokens: Int32Array): Promise<NativeEngineResult>;
  loadWeights(directory: string): number;
  /** Swaps in f32 copies of a native Trainer's current parameters, made in place (no JS copy). */
  loadWeightsFromTrainer(trainer: NativeTrainer): number;
  /** Receives the parameters rank 0 of a connected two-rank weight link sends, and swaps them in between batches. */
  receiveWeights(collective: NativeCollective): Promise<NativeWeightTransfer & { weightsVersion: number }>;
  stats(): NativeEngineStats;
  /** Lockstep: every turn up to `turn` has been handled and its follow-ups queued. */
  proceed(turn: number): void;
  close(): void;
}

/** Options of a native Trainer (all optional; see src/native/trainer.ts). */
export interface NativeTrainerOptions {
  lr?: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  weightDecay?: number;
  maxGradNorm?: number;
  warmupSteps?: number;
  icepopLow?: number;
  icepopHigh?: number;
  threads?: number;
  /**
   * Minimum length of a prompt prefix that sequences of a micro-batch share for it to be computed
   * once (native/train/shared_prefixes.h; default 16); 0 computes every sequence whole.
   */
  sharedPrefixMinTokens?: number;
  /**
   * Storage of AdamW's moments: 'f32' (default) or 'bf16' (half their memory; updated in f32 and
   * stored with deterministic stochastic rounding, native/train/adamw.h). A checkpoint keeps the
   * dtype it was saved with; loading it into a trainer of the other dtype is refused.
   */
  optimizerStateDtype?: 'f32' | 'bf16';
  /**
   * The matmuls of the forward, the backward and the LM-head loss (precision.train): 'f32' (default),
   * or 'bf16': operands rounded to BF16, products summed in f32 (native/cpu/matmul_nn_bf16.h); master
   * weights, gradients and AdamW stay f32. Recorded in a checkpoint's trainer_state.json.
   */
  matmulPrecision?: 'f32' | 'bf16';
  /** Open a folder written by save() with a fresh AdamW (step 0, zero moments) instead of restoring its optimizer state. */
  freshOptimizer?: boolean;
  /**
   * Where the parameters live and the training runs: 'auto' (default: CUDA when usable, else the CPU), 'cpu' or
   * 'cuda' (refused with the reason where CUDA cannot run). The CUDA trainer is unverified on a GPU (docs/cuda.md).
   */
  device?: 'auto' | 'cpu' | 'cuda';
  /**
   * Bytes the forward may keep activations in for the backward (beyond them each layer is recomputed, activation
   * checkpointing); 0 (default): half the memory free at each micro-batch (the host's available memory on the CPU, the
   * device's on CUDA). The same bits either way.
   */
  activationBytes?: number;
}

/** One packed micro-batch: coef[t] (and oldLogprobs[t]) weight log p(tokens[t+1] | its sequence up to t). */
export interface NativeTrainBatch {
  kind: 'sft' | 'pg';
  tokens: Int32Array;
  seqLengths?: Int32Array;
  coef: Float32Array;
  oldLogprobs?: Float32Array;
  /** Score centering (pg only): K draws per token, [T × K], token −1 for none. */
  numDraws?: number;
  drawTokens?: Int32Array;
  drawLogprobs?: Float32Array;
  /** Policy gradient: the sampling temperature π_θ's log-probs are taken at (default 1). */
  temperature?: number;
  /** KL penalty (pg only): β ≥ 0, 0 or absent for off; refLogprobs and klWeight [T] are then required. */
  klCoef?: number;
  refLogprobs?: Float32Array;
  klWeight?: Float32Array;
}

/** Per-micro-batch diagnostics of the loss. */
export interface NativeTrainDiagnostics {
  loss: number;
  tokens: number;
  meanRatio: number;
  fractionMasked: number;
  /** Mean |log π_θ − log μ| over the weighted tokens (masked ones included): the sampler/trainer mismatch; 0 for SFT. */
  meanAbsLogRatio: number;
  meanEntropy: number;
  meanLogprob: number;
  centering: number;
  meanDrawWeight: number;
  /** Mean k3 KL estimate over tokens with klWeight > 0 (0 when the KL penalty is off). */
  klMean: number;
  /** Token rows not computed because a shared prefix stood in for them (0 without sharing). */
  sharedPrefixTokens: number;
  /**
   * Quantiles of the importance ratio ρ = exp(logp_new − logp_old) over the `tokens` weighted tokens
   * (the ones meanRatio averages over, IcePop-masked tokens included), computed exactly on the
   * micro-batch: linear interpolation between closest ranks (numpy's default), min and max the
   * extremes. All 0 when tokens is 0; all 1 for the SFT loss (ρ ≡ 1).
   */
  ratioQuantiles: { min: number; p01: number; p10: number; p50: number; p90: number; p99: number; max: number };
}

/** One f32 tensor under its checkpoint name. */
export interface NativeNamedTensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

/** native Trainer: f32 master weights, gradients, AdamW and checkpoints (native/train). */
export interface NativeTrainer {
  /** With a collective: the rank's last micro-batch of an update, its gradients summed over the group bucket by bucket as the backward finishes each layer. */
  accumulate(batch: NativeTrainBatch, sumOver?: NativeCollective): Promise<NativeTrainDiagnostics>;
  step(): { gradNorm: number; lr: number; step: number };
  zeroGrad(): void;
  save(directory: string, runConfigJson?: string): void;
  /** config.json and model.safetensors (and run_config.json when given), as save() writes them, without the optimizer state. */
  saveModel(directory: string, runConfigJson?: string): void;
  load(directory: string): void;
  saveGradients(path: string): void;
  stepCount(): number;
  setLr(lr: number): void;
  tensors(): NativeNamedTensor[];
  gradients(): NativeNamedTensor[];
  /** Where it computes: "cpu (avx512, 2 threads)" or "cuda:0 (NVIDIA H200, cublasLt 13.0.2)". */
  device(): string;
  /** Data-parallel training: the accumulated gradients summed over the collective's ranks, in place. */
  allReduceGradients(collective: NativeCollective): Promise<void>;
  /** 16 hex digits of a hash of the parameters' bits (equal on ranks that hold the same weights). */
  parameterFingerprint(): string;
}

/** Options of a native Collective: a host ring over TCP, or an NCCL group (CUDA builds). */
export type NativeCollectiveOptions =
  | { kind: 'host'; rank: number; ranks: number; timeoutMs: number; bindHost?: string; port?: number }
  | { kind: 'nccl'; rank: number; ranks: number; timeoutMs: number; id: Uint8Array };

/** What benchHostRing measured. */
export interface NativeHostRingBenchFigures {
  ranks: number;
  floats: number;
  bestSeconds: number;
  medianSeconds: number;
  /** floats · 4 bytes / median seconds, GB/s. */
  algorithmGbytesPerSecond: number;
  /** floats · 4 · 2(R − 1)/R / median seconds, GB/s: what each rank sends. */
  busGbytesPerSecond: number;
  /** The sums agree bit for bit across the ranks. */
  sameOnEveryRank: boolean;
}

/** native Collective (native/core/collective.h): one rank's membership in a data-parallel group. */
export interface NativeCollective {
  /** The host ring's listening port (0 for NCCL). */
  port(): number;
  /** Host ring: connect(nextHost, nextPort) to the next rank (and accept the previous one); NCCL: connect() joins the group. */
  connect(nextHost?: string, nextPort?: number): Promise<void>;
  description(): string;
  rank(): number;
  ranks(): number;
  close(): void;
}

/** One weight-link transfer: parameter bytes moved and the seconds it took (header, agreement, payload). */
export interface NativeWeightTransfer {
  bytes: number;
  seconds: number;
}

/** native WeightsSnapshot (native/napi/weight_link.h): one weights version as its checkpoint would hold it, to send over weight links. */
export interface NativeWeightsSnapshot {
  /** Tensor bytes it holds. */
  bytes(): number;
  shape(): string;
  /** To every other rank of a connected weight link (this side is rank 0). */
  send(collective: NativeCollective): Promise<NativeWeightTransfer>;
  /** Frees the bytes now (a send under way keeps them until it ends); later calls throw. */
  release(): void;
}

/** The functions and classes exported by s3_native.node. */
export interface NativeBinding {
  systemInfo(): NativeSystemInfo;
  /** What a device choice means on this machine; 'cuda' where CUDA cannot run throws with the reason. */
  resolveDevice(choice: 'auto' | 'cpu' | 'cuda'): 'cpu' | 'cuda';
  /** Free and total bytes of CUDA device 0's memory now; throws without a device or without CUDA in the addon. */
  deviceMemory(): { freeBytes: number; totalBytes: number };
  Model: new (directory: string) => NativeModel;
  initCheckpoint(options: { directory: string; seed: bigint; dtype: string }): number;
  benchForward(model: NativeModel, options: { sequences: number; tokens: number; repetitions: number; kvCacheDtype?: 'f32' | 'bf16' | 'fp8' }): NativeBenchFigures;
  benchDecode(model: NativeModel, options: { sequences: number; context: number; repetitions: number; kvCacheDtype?: 'f32' | 'bf16' | 'fp8' }): NativeBenchFigures;
  machineLimits(): NativeMachineLimits;
  /** Timed runner steps on a device (native/bench/runner_bench.h). */
  benchRunnerDecode(model: NativeModel, options: { device?: 'auto' | 'cpu' | 'cuda'; weights?: 'stored' | 'bf16' | 'fp8'; kvCacheDtype?: 'f32' | 'bf16' | 'fp8'; sequences: number; context: number; repetitions: number }): NativeRunnerBenchFigures;
  benchRunnerPrefill(model: NativeModel, options: { device?: 'auto' | 'cpu' | 'cuda'; weights?: 'stored' | 'bf16' | 'fp8'; sequences: number; tokens: number; stepTokens: number; repetitions: number }): NativeRunnerBenchFigures;
  /** Bytes per second read plus written by a device-to-device copy on CUDA device 0 (throws without CUDA). */
  deviceCopyBandwidth(): number;
  Engine: new (directory: string, options?: NativeEngineOptions) => NativeEngine;
  Trainer: new (directory: string, options?: NativeTrainerOptions) => NativeTrainer;
  Collective: new (options: NativeCollectiveOptions) => NativeCollective;
  /** A copy of an idle trainer's parameters (f32, as it saves them), or the checkpoint in a folder (its tensors as stored). */
  WeightsSnapshot: new (source: NativeTrainer | string) => NativeWeightsSnapshot;
  /** A new ncclUniqueId for rank 0 to hand to the others (throws without CUDA or NCCL). */
  ncclUniqueId(): Uint8Array;
  /** The host ring's all-reduce timed with ranks as threads on loopback (native/bench/collective_bench.h). */
  benchHostRing(options: { ranks: number; floats: number; repetitions?: number }): NativeHostRingBenchFigures;
  sampleLogits(logits: Float32Array, temperature: number, seed: bigint | number, tokenIndex: number, numDraws: number): { tokens: Int32Array; logprobs: Float32Array };
}
