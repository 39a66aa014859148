// The TypeScript shape of what the native addon exports (native/napi/). One interface per object.

/** CPU facts reported by native/core/cpu_features. */
export interface NativeCpuInfo {
  brand: string;
  logicalCores: number;
  threads: number;
  features: Record<string, boolean>;
  simdLevel: string;
}

/** One CUDA device. */
export interface NativeCudaDevice {
  index: number;
  name: string;
  totalMemory: number;
  computeCapability: string;
  multiprocessors: number;
}

/** The CUDA runtime's view of this machine. */
export interface NativeCudaInfo {
  compiled: boolean;
  deviceCount: number;
  driverVersion: number;
  runtimeVersion: number;
  devices: NativeCudaDevice[];
  error: string;
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
  logits(ids: Int32Array, startPos: number): Float32Array;
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

/** The machine's own limits, measured in the same run as a benchmark. */
export interface NativeMachineLimits {
  fmaGflops: number;
  readGBytesPerSecond: number;
  simd: string;
  threads: number;
}

/** The functions and classes exported by s3_native.node. */
export interface NativeBinding {
  systemInfo(): NativeSystemInfo;
  Model: new (directory: string) => NativeModel;
  initCheckpoint(options: { directory: string; seed: bigint; dtype: string }): number;
  benchForward(model: NativeModel, options: { sequences: number; tokens: number; repetitions: number }): NativeBenchFigures;
  benchDecode(model: NativeModel, options: { sequences: number; context: number; repetitions: number }): NativeBenchFigures;
  machineLimits(): NativeMachineLimits;
}
